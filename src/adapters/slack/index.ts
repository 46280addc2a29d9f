/** The Slack channel adapter (Bolt + Web API). */
export {
  createSlackAdapter,
  SLACK_TEXT_LIMIT,
  SlackAdapter,
  type SlackAdapterConfig,
  type SlackHttpConfig,
  type SlackSocketModeConfig,
} from "./adapter.js";
export type { SlackIdentity } from "./web.js";
