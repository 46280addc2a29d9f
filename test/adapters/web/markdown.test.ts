/** The page's Markdown renderer: what a chat reply looks like, and that no text can become markup. */
import { describe, expect, it } from "vitest";
import { renderMarkdown } from "../../../src/adapters/web/public/markdown.js";

describe("web chat Markdown", () => {
  it("renders the markup replies use", () => {
    expect(renderMarkdown("**bold**, *italic*, _also_, ~~gone~~ and `code`")).toBe(
      "<p><strong>bold</strong>, <em>italic</em>, <em>also</em>, <del>gone</del> and <code>code</code></p>",
    );
    expect(renderMarkdown("```ts\nconst a = 1 < 2;\n```")).toBe(
      '<pre data-lang="ts"><code>const a = 1 &lt; 2;</code></pre>',
    );
    expect(renderMarkdown("- one\n- two\n\n1. first\n2. second")).toBe(
      "<ul><li>one</li><li>two</li></ul><ol><li>first</li><li>second</li></ol>",
    );
    expect(renderMarkdown("# Title\n> quoted\n\n---")).toBe(
      "<h3>Title</h3><blockquote><p>quoted</p></blockquote><hr>",
    );
    expect(renderMarkdown("line one\nline two\n\nnext")).toBe("<p>line one<br>line two</p><p>next</p>");
  });

  it("renders links to web and mail addresses only", () => {
    expect(renderMarkdown("[docs](https://example.com/a?b=1&c=2)")).toBe(
      '<p><a href="https://example.com/a?b=1&amp;c=2" target="_blank" rel="noopener noreferrer">docs</a></p>',
    );
    expect(renderMarkdown("see https://example.com/x.")).toBe(
      '<p>see <a href="https://example.com/x" target="_blank" rel="noopener noreferrer">https://example.com/x</a>.</p>',
    );
    expect(renderMarkdown("[click](javascript:alert(1))")).not.toContain("<a");
    expect(renderMarkdown("[x](data:text/html,hi)")).not.toContain("<a");
  });

  it("shows HTML in messages as text", () => {
    const html = renderMarkdown('<img src=x onerror="alert(1)"> <script>alert(2)</script> **<b>hi</b>**');
    expect(html).not.toMatch(/<(img|script|b)\b/);
    expect(html).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;");
    const attr = renderMarkdown('[a](https://x.example/"onmouseover="alert(1))');
    expect(attr).not.toMatch(/href="[^"]*"onmouseover/);
    expect(renderMarkdown("`<script>`")).toBe("<p><code>&lt;script&gt;</code></p>");
  });

  it("keeps code spans and fences free of markup, and shows a fence still streaming as code", () => {
    expect(renderMarkdown("`**not bold**` and **bold**")).toBe(
      "<p><code>**not bold**</code> and <strong>bold</strong></p>",
    );
    expect(renderMarkdown("Here:\n```\nls -la\n*.txt")).toBe(
      "<p>Here:</p><pre><code>ls -la\n*.txt</code></pre>",
    );
  });

  it("shows the renderer's tool status lines", () => {
    expect(renderMarkdown("🔧 **bash** `ls -la` ✅ 0.4 s\n🔧 **read** `README.md` ⏳")).toBe(
      "<p>🔧 <strong>bash</strong> <code>ls -la</code> ✅ 0.4 s<br>🔧 <strong>read</strong> <code>README.md</code> ⏳</p>",
    );
  });
});
