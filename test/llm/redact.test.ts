/**
 * The one secret scrubber (src/agent/llm/redact.ts) that logs, chat output, CLI output and provider
 * errors share: every credential shape it knows is masked, prose that merely looks a little like one
 * is kept, and a text that is still growing never shows the start of a token.
 */

import { describe, expect, it } from "vitest";
import { REDACTED, redactGrowingText, redactSecrets } from "../../src/agent/llm/redact.js";
import { ACCESS_NOTICES } from "../../src/extensions/access/policy.js";

/** Each token, and how long its public part is (a fixed prefix, or the bot's id). */
const TOKENS: Record<string, [token: string, publicChars: number]> = {
  slackBot: ["xoxb-2212345678-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", 5],
  slackApp: ["xapp-1-A0123456789-1234567890123-abcdef0123456789abcdef", 5],
  openai: ["sk-proj-AbCdEf0123456789AbCdEf0123456789", 3],
  anthropic: ["sk-ant-api03-AbCdEfGh0123456789-xyzXYZ_0123456789", 3],
  google: ["AIzaSyA1234567890abcdefghijklmnopqrstu", 4],
  telegram: ["7123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw", 11],
  discord: ["MTIzNDU2Nzg5MDEyMzQ1Njc4.GAbCdE.abcdefghijklmnopqrstuvwxyz0123456789AB", 25],
  githubClassic: ["ghp_1A2b3C4d5E6f7G8h9I0jKlMnOpQrStUvWxYz", 4],
  githubFineGrained: ["github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFG", 11],
};

describe("redactSecrets", () => {
  it.each(Object.entries(TOKENS))("masks a %s token wherever it stands", (_name, [token]) => {
    const contexts = [token, `key=${token}`, `{"value":"${token}"}`, `see https://x.example/?t=${token}&a=1`];
    for (const text of contexts) {
      const out = redactSecrets(text);
      expect(out).not.toContain(token);
      expect(out).toContain(REDACTED);
    }
  });

  it("masks credentials after an auth scheme, URL passwords and exact secret values", () => {
    expect(redactSecrets("Authorization: Bearer abcdefghijklmnop")).toBe(`Authorization: Bearer ${REDACTED}`);
    expect(redactSecrets("authorization: token 0123456789abcdef")).toBe(`authorization: token ${REDACTED}`);
    expect(redactSecrets("Basic dXNlcjpwYXNzd29yZA==")).toBe(`Basic ${REDACTED}`);
    expect(redactSecrets("redis://user:pw1234@host:6379")).toBe(`redis://user:${REDACTED}@host:6379`);
    const telegram = TOKENS.telegram?.[0] ?? "";
    expect(redactSecrets(`GET https://api.telegram.org/bot${telegram}/getMe`)).toBe(
      `GET https://api.telegram.org/bot${REDACTED}/getMe`,
    );
    expect(redactSecrets('the secret is f3a9c"1e77', ['f3a9c"1e77'])).toBe(`the secret is ${REDACTED}`);
    expect(redactSecrets('{"s":"f3a9c\\"1e77"}', ['f3a9c"1e77'])).toBe(`{"s":"${REDACTED}"}`);
  });

  it("keeps prose and numbers that are not credentials", () => {
    const prose = [
      "ordinary text 12:34 and version 1.2.3",
      "Read the Bot documentation, then the Token expiration section.",
      "The basic idea: a token is a piece of text, e.g. risk-free or task-based.",
      "Thread slack:T1:C2:1712.33 has 1200 tokens.",
    ];
    for (const text of prose) expect(redactSecrets(text)).toBe(text);
  });

  it("keeps the bot's own notices whole (a word ending a sentence after 'bot' is not a credential)", () => {
    const notices = [
      ...Object.values(ACCESS_NOTICES),
      "Talk to the bot: it answers. Or message the Bot directly, then the token: expiring.",
      "Only admins can change the model in this channel; nothing changed. (An admin can allow everyone with channels.telegram.settings: everyone.)",
    ];
    for (const text of notices) expect(redactSecrets(text ?? "")).toBe(text);
  });

  it("masks configured secrets of any length, short ones only where they stand as a word", () => {
    expect(redactSecrets("key=ab7 and ab7x and xab7", ["ab7"])).toBe(`key=${REDACTED} and ab7x and xab7`);
    expect(redactSecrets("q", ["q"])).toBe(REDACTED);
    expect(redactSecrets("see long-secret-9f, long-secret-9f!", ["long-secret-9f"])).toBe(
      `see ${REDACTED}, ${REDACTED}!`,
    );
    // A secret inside a longer one: the longer is masked whole.
    expect(redactSecrets("pw-12345678-extra", ["pw-12345678", "pw-12345678-extra"])).toBe(REDACTED);
    expect(redactSecrets("nothing here", ["", "  "])).toBe("nothing here");
  });
});

describe("redactGrowingText", () => {
  it.each(Object.entries(TOKENS))(
    "never shows the start of a %s token that is still arriving",
    (_n, entry) => {
      const [token, publicChars] = entry;
      const text = `Here it is: ${token} and more`;
      for (let end = 0; end <= text.length; end++) {
        const frame = redactGrowingText(text.slice(0, end));
        // No frame shows 4 or more characters of the token's secret part.
        const secret = token.slice(publicChars);
        for (let i = 0; i + 4 <= secret.length; i++) expect(frame).not.toContain(secret.slice(i, i + 4));
      }
      expect(redactGrowingText(text)).toBe(`Here it is: ${REDACTED} and more`);
    },
  );

  it("leaves a growing text alone when its end is ordinary prose", () => {
    expect(redactGrowingText("Hello, the answer is 42")).toBe("Hello, the answer is 42");
    expect(redactGrowingText("Use the Bot settings")).toBe("Use the Bot settings");
  });
});
