/**
 * The web chat in a real browser (Debian's `chromium`, driven by playwright-core): a person signs in
 * with the one-time link, sends a message, watches the reply stream in with a tool line and the
 * typing indicator, approves a tool call with the button (the page's CSRF token on every write), and
 * uses a command; a bookmarked conversation opens in another browser after signing in there. The
 * agent side is a `RunRenderer` fed scripted events, exactly what the worker does with a real run.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunRenderer } from "../../../src/adapters/render/run-renderer.js";
import type { AttachmentRef } from "../../../src/adapters/types.js";
import { WebChatAdapter } from "../../../src/adapters/web/index.js";
import { Received } from "../contract.js";
import { streamedText, textUpdate, toolEnd, toolStart } from "../support/agent-events.js";
import { until } from "../support/drive.js";
import { serveWebChat, type WebServer } from "./harness.js";

const CHROMIUM = "/usr/bin/chromium";
const SKIP_REASON = `${CHROMIUM} is missing (install Debian's package: apt-get install -y chromium)`;
const haveChromium = existsSync(CHROMIUM);

describe.skipIf(!haveChromium)(
  `web chat in Chromium${haveChromium ? "" : ` — skipped: ${SKIP_REASON}`}`,
  () => {
    let browser: Browser;
    let adapter: WebChatAdapter;
    let server: WebServer;
    let page: Page;
    const received = new Received();
    const problems: string[] = [];

    beforeAll(async () => {
      adapter = new WebChatAdapter({ admins: ["web:local"], typingDurationMs: 3000 });
      await adapter.registerCommands([
        { name: "model", description: "Show or switch the model" },
        { name: "new", description: "Start a new session" },
      ]);
      await adapter.start(received);
      server = await serveWebChat(adapter);
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: [
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--disable-quic",
          "--no-first-run",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
        ],
      });
      page = await browser.newPage({ viewport: { width: 1100, height: 760 } });
      // A CSP violation or a script error shows up here: the page must run clean.
      page.on("console", (m) => {
        if (m.type() === "error") problems.push(m.text());
      });
      page.on("pageerror", (e) => problems.push(e.message));
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      await adapter?.stop();
      await server?.close();
    });

    it("chats: a streamed reply with a tool line, an approval by button, a command", async () => {
      await page.goto(await adapter.signInLink(`${server.url}/`));
      expect(page.url()).toBe(`${server.url}/`);
      await page.getByText("Connected", { exact: true }).waitFor();

      // The person writes; the adapter delivers it.
      const input = page.getByRole("textbox", { name: "Message" });
      await input.fill("What is in the project folder?");
      await input.press("Enter");
      await until(() => received.messages.length === 1, 30_000, "the message to be delivered");
      const inbound = received.messages[0];
      expect(inbound).toMatchObject({
        platform: "web",
        text: "What is in the project folder?",
        isDirect: true,
      });
      const threadKey = inbound?.threadKey as string;
      // The address names the conversation, so it can be bookmarked.
      await expect.poll(() => page.url()).toBe(`${server.url}/c/${threadKey.slice("web:".length)}`);
      await page.locator(".msg.user").getByText("What is in the project folder?").waitFor();
      await page.getByRole("button", { name: "What is in the project folder?" }).waitFor();

      // The agent works: the typing indicator until something of the answer shows, a tool line,
      // then the reply streams in by edits.
      const renderer = new RunRenderer({ adapter, threadKey });
      renderer.onEvent({ type: "agent_start" });
      await page.getByText("Switchboard is typing…").waitFor();
      renderer.onEvent(toolStart("t1", "bash", { command: "ls -la" }));
      const toolLine = page.locator(".msg.tools");
      await toolLine.getByText("ls -la").waitFor();
      await expect.poll(() => toolLine.textContent()).toContain("⏳");
      await page.getByText("Switchboard is typing…").waitFor({ state: "hidden" });
      renderer.onEvent(toolEnd("t1", "bash"));
      await expect.poll(() => toolLine.textContent()).toContain("✅");

      const [start, ...rest] = streamedText(["Here are ", "the files:", "\n\n- `README.md`\n- `src/`"]);
      if (start) renderer.onEvent(start);
      renderer.onEvent(textUpdate("Here are the files:", "the files:"));
      const reply = page.locator(".msg.bot:not(.tools)").filter({ hasText: "Here are the files:" });
      await reply.waitFor();
      const replyId = await reply.getAttribute("data-id");
      expect(await reply.locator("li").count()).toBe(0);
      for (const e of rest) renderer.onEvent(e);
      renderer.onEvent({ type: "agent_end", messages: [] });
      await renderer.close();
      // The same message grew: it was edited in place, not posted again.
      const edited = page.locator(`[data-id="${replyId}"]`);
      await edited.locator("li code", { hasText: "README.md" }).waitFor();
      expect(await page.locator(".msg.bot:not(.tools)").count()).toBe(1);

      // An approval request: the bot's ✅ ❌ ♾️ become buttons; a click is the admin's reaction.
      const request = await adapter.post(
        threadKey,
        '🔐 Approval needed: `bash`\n```json\n{\n  "command": "rm -rf build"\n}\n```\nRun triggered by you.',
      );
      for (const emoji of ["✅", "❌", "♾️"]) await adapter.react(request, emoji);
      const approve = page.getByRole("button", { name: "Approve", exact: true });
      await approve.waitFor();
      await expect.poll(() => page.getByRole("button", { name: "Always allow" }).isEnabled()).toBe(true);
      await page.screenshot({ path: "/tmp/webchat.png" });
      await approve.click();
      await until(() => received.reactions.length === 1, 30_000, "the approval reaction");
      expect(received.reactions[0]).toMatchObject({
        platform: "web",
        threadKey,
        messageId: request,
        emoji: "✅",
        added: true,
        user: { id: "web:local", isBot: false },
      });
      await expect.poll(() => approve.getAttribute("aria-pressed")).toBe("true");
      expect(await page.getByRole("button", { name: "Deny", exact: true }).isDisabled()).toBe(true);

      // Commands: "/" lists them; a command line is delivered as a command.
      await input.fill("/mo");
      await page.getByRole("listbox", { name: "Commands" }).getByText("/model").waitFor();
      await input.press("Tab");
      expect(await input.inputValue()).toBe("/model ");
      await input.pressSequentially("gpt-5");
      await input.press("Enter");
      await until(() => received.commands.length === 1, 30_000, "the command");
      expect(received.commands[0]).toMatchObject({ name: "model", args: "gpt-5", threadKey });

      expect(problems).toEqual([]);
    }, 120_000);

    it("keeps up across a reload: the conversation and the latest text come back", async () => {
      const threadKey = received.messages[0]?.threadKey as string;
      const ref = await adapter.post(threadKey, "Before the reload");
      await page.reload();
      await page.getByText("Before the reload").waitFor();
      await adapter.edit(ref, "After the reload, **edited**");
      await page.locator("strong", { hasText: "edited" }).waitFor();
      // "+ New chat" opens an empty conversation to write into; it exists once its first message does.
      await page.getByRole("button", { name: "New conversation" }).click();
      await expect.poll(() => page.locator(".msg").count()).toBe(0);
      await expect.poll(() => page.locator("#title").textContent()).toBe("New conversation");
      expect(await page.locator(".conversations li").count()).toBe(1);
      expect(problems).toEqual([]);
    }, 120_000);

    it("a refused first message leaves no empty conversation; control characters show as symbols, never in a title", async () => {
      const before = (await adapter.store.list()).length;
      await page.getByRole("button", { name: "New conversation" }).click();
      const input = page.getByRole("textbox", { name: "Message" });
      // Longer than the chat takes: refused, and no conversation is made for it.
      await input.fill("x".repeat(20_001));
      await input.press("Enter");
      await page.getByText(/Not sent: The message has 20001 characters/).waitFor();
      expect((await adapter.store.list()).length).toBe(before);
      expect(await page.locator(".conversations li").count()).toBe(before);
      // The browser reports the refused request itself; that is the one console error expected.
      expect(problems).toEqual([expect.stringContaining("413")]);
      problems.length = 0;

      // A pasted terminal line: NUL, ESC and BEL become visible symbols, in the message and the title.
      await input.fill("build failed \u0000 \u001b[31mred\u001b[0m \u0007done");
      await input.press("Enter");
      await until(() => received.messages.length === 2, 30_000, "the message to be delivered");
      const shown = "build failed ␀ ␛[31mred␛[0m ␇done";
      expect(received.messages[1]?.text).toBe(shown);
      await page.locator(".msg.user").getByText(shown).waitFor();
      await page.getByRole("button", { name: shown }).waitFor();
      const conversations = await adapter.store.list();
      expect(conversations).toHaveLength(before + 1);
      expect(conversations[0]?.title).toBe(shown);
      const codes = [...conversations.map((c) => c.title).join("")].map((ch) => ch.codePointAt(0) ?? 0);
      expect(codes.filter((c) => c < 0x20 || c === 0x7f)).toEqual([]);
      expect(problems).toEqual([]);
    }, 120_000);

    it("sends a picture with a question and shows it, the answer and a file the agent sent back", async () => {
      const picture = await sharp({ create: { width: 64, height: 48, channels: 3, background: "#2a6" } })
        .png()
        .toBuffer();
      await page.locator("#new-conversation").click();
      await page
        .locator("#file-input")
        .setInputFiles({ name: "square.png", mimeType: "image/png", buffer: picture });
      await page.locator(".pending").getByText("square.png").waitFor();
      const input = page.getByRole("textbox", { name: "Message" });
      await input.fill("What colour is this?");
      await input.press("Enter");
      await until(
        () => received.messages.some((m) => m.text === "What colour is this?"),
        30_000,
        "the message with its picture",
      );
      const inbound = received.messages.find((m) => m.text === "What colour is this?");
      expect(inbound?.attachments).toEqual([
        expect.objectContaining({
          kind: "image",
          name: "square.png",
          mimeType: "image/png",
          sizeBytes: picture.length,
        }),
      ]);
      // The worker fetches it through the adapter, byte for byte.
      const file = await adapter.download(inbound?.attachments[0] as AttachmentRef);
      const chunks: Buffer[] = [];
      for await (const c of file.body) chunks.push(Buffer.from(c));
      expect(Buffer.concat(chunks).equals(picture)).toBe(true);
      // The person sees the picture in the conversation, loaded from the server.
      const shown = page.locator(".msg.user img[alt='square.png']");
      await shown.waitFor();
      await expect
        .poll(() => shown.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth))
        .toBe(64);

      // The answer, and a file the agent sends back (send_file's upload).
      const threadKey = inbound?.threadKey as string;
      const renderer = new RunRenderer({ adapter, threadKey });
      renderer.onEvent({ type: "agent_start" });
      for (const e of streamedText(["It is ", "green."])) renderer.onEvent(e);
      renderer.onEvent({ type: "agent_end", messages: [] });
      await renderer.close();
      await page.locator(".msg.bot").getByText("It is green.").waitFor();
      const dir = mkdtempSync(join(tmpdir(), "sb-browser-"));
      writeFileSync(join(dir, "colours.csv"), "colour,count\ngreen,1\n");
      await adapter.uploadFile(
        threadKey,
        { path: join(dir, "colours.csv"), name: "colours.csv", sizeBytes: 21, mimeType: "text/plain" },
        { caption: "The colours I found." },
      );
      const link = page.locator(".msg.bot a", { hasText: "colours.csv" });
      await link.waitFor();
      const [download] = await Promise.all([page.waitForEvent("download"), link.click()]);
      expect(readFileSync((await download.path()) as string, "utf8")).toBe("colour,count\ngreen,1\n");
      await page.screenshot({ path: "/tmp/webchat-files.png" });
      expect(problems).toEqual([]);
    }, 120_000);

    it("opens a bookmarked conversation in another browser once it signs in there", async () => {
      const threadKey = received.messages[0]?.threadKey as string;
      const bookmark = `${server.url}/c/${threadKey.slice("web:".length)}`;
      // The signed-in page makes a one-time link for the other browser.
      await page.getByRole("button", { name: "Sign in elsewhere" }).click();
      await expect.poll(() => page.locator("#link").inputValue()).toMatch(/\?token=[A-Za-z0-9_-]+$/);
      const link = await page.locator("#link").inputValue();

      const other = await browser.newContext();
      try {
        const tab = await other.newPage();
        const refused = await tab.goto(bookmark);
        expect(refused?.status()).toBe(401);
        await tab.getByLabel("Sign-in link or token").fill(link);
        await tab.getByRole("button", { name: "Sign in" }).click();
        await tab.locator(".msg.user").getByText("What is in the project folder?").waitFor();
        expect(tab.url()).toBe(bookmark);
        await tab.getByText("After the reload, edited").waitFor();
        // The link worked once.
        const again = await (await other.newPage()).goto(link);
        expect(again?.status()).toBe(401);
      } finally {
        await other.close();
      }
      expect(problems).toEqual([]);
    }, 120_000);
  },
);
