/**
 * What the Slack adapter sends as a message's `text` and a reaction's `name`: the contract's
 * markdown or plain text turned into Slack's form within Slack's limit, and the contract's Unicode
 * emoji turned into Slack's reaction names. Both throw `ChannelError` for what Slack would refuse.
 */
import { toSlackMrkdwn } from "../render/markdown.js";
import { ChannelError } from "../types.js";
import { slackNameFromEmoji } from "./emoji.js";

/** Slack's own limit on `text`. */
const SLACK_TEXT_LIMIT = 40_000;

const escapePlain = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/**
 * `text` as Slack shows it: mrkdwn from markdown (the default), escaped when plain. Throws
 * `too_long` when the result is over Slack's 40,000 characters.
 */
export function slackText(text: string, format: "markdown" | "plain" | undefined): string {
  // Slack does not show leading blank lines or trailing whitespace; sending them only makes
  // the stored text differ from what people see.
  const out = (format === "plain" ? escapePlain(text) : toSlackMrkdwn(text)).replace(/^\n+/, "").trimEnd();
  if (out.length > SLACK_TEXT_LIMIT)
    throw new ChannelError(
      "too_long",
      `Slack message is ${out.length} characters after formatting; the limit is ${SLACK_TEXT_LIMIT}`,
      "slack",
    );
  return out;
}

/** The Slack reaction name of `emoji` (Unicode or `:name:`); throws `bad_request` when none is known. */
export function slackReactionName(emoji: string): string {
  const name = slackNameFromEmoji(emoji);
  if (!name)
    throw new ChannelError(
      "bad_request",
      `no Slack reaction name known for ${emoji}; pass it as :name:`,
      "slack",
    );
  return name;
}
