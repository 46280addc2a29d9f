import { describe, expect, it } from "vitest";
import { toPlainText, toSlackMrkdwn, toTelegramHtml } from "../../../src/adapters/render/markdown.js";

describe("markdown to Telegram HTML", () => {
  it("converts emphasis, code, links and headings", () => {
    expect(toTelegramHtml("# Title\n**bold** and *it* and ~~gone~~ and `x<y`")).toBe(
      "<b>Title</b>\n<b>bold</b> and <i>it</i> and <s>gone</s> and <code>x&lt;y</code>",
    );
    expect(toTelegramHtml("see [the docs](https://example.com/a?b=1&c=2)")).toBe(
      'see <a href="https://example.com/a?b=1&amp;c=2">the docs</a>',
    );
  });

  it("renders fences as pre blocks with the language, escaped", () => {
    expect(toTelegramHtml("```js\nif (a < b && c) {}\n```")).toBe(
      '<pre><code class="language-js">if (a &lt; b &amp;&amp; c) {}</code></pre>',
    );
  });

  it("keeps unmatched markers and snake_case literal, and escapes raw HTML", () => {
    expect(toTelegramHtml("2 * 3 = 6, my_var_name, <script>")).toBe("2 * 3 = 6, my_var_name, &lt;script&gt;");
    expect(toTelegramHtml("**not closed")).toBe("**not closed");
  });

  it("closes an unfinished fence while streaming", () => {
    expect(toTelegramHtml("text\n```\ncode so far")).toBe("text\n<pre>code so far</pre>");
  });

  it("turns lists and quotes into bullets and blockquotes", () => {
    expect(toTelegramHtml("- one\n- two\n> quoted\n> more")).toBe(
      "• one\n• two\n<blockquote>quoted\nmore</blockquote>",
    );
  });
});

describe("markdown to Slack mrkdwn", () => {
  it("uses Slack's markers and link syntax and escapes control characters", () => {
    expect(toSlackMrkdwn("**bold** *it* ~~s~~ [x](https://e.com) a<b & c")).toBe(
      "*bold* _it_ ~s~ <https://e.com|x> a&lt;b &amp; c",
    );
  });
});

describe("markdown to plain text", () => {
  it("strips markup and keeps link targets", () => {
    expect(toPlainText("## Hi\n**b** `c` [site](https://e.com)\n```\ncode\n```")).toBe(
      "Hi\nb c site (https://e.com)\ncode",
    );
  });
});
