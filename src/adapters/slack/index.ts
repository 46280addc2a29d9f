/** The Slack channel adapter (Bolt + Web API). */
export {
  SlackAdapter,
  type SlackAdapterConfig,
} from "./adapter.js";
