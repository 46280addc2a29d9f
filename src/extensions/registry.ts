/**
 * What the runner holds, as a thread's binding sees it: each loaded extension's registrations and
 * the few runner services a binding uses. Its own module so the runner (which creates bindings) and
 * the bindings (which read the runner) do not import each other.
 */
import type { AsyncLocalStorage } from "node:async_hooks";
import type { Provider } from "../agent/llm/types.js";
import type { StructuredLogger } from "../agent/logger.js";
import type {
  CommandOptions,
  ExtensionContext,
  ExtensionEventType,
  ExtensionFailure,
  ExtensionHandler,
  ExtensionHost,
  ProviderDefinition,
  SettingsPolicy,
  ToolDefinition,
  ToolSource,
  ToolWrapper,
} from "./types.js";

/** What one loaded extension registered, and whether it is still enabled. */
export interface LoadedExtension {
  readonly name: string;
  enabled: boolean;
  failure?: ExtensionFailure;
  // Handlers are stored untyped per event name; `on` guarantees each matches its event.
  readonly handlers: Map<ExtensionEventType, ExtensionHandler<ExtensionEventType>[]>;
  readonly tools: ToolDefinition[];
  readonly toolSources: ToolSource[];
  readonly wrappers: { name: string; wrapper: ToolWrapper }[];
  readonly providers: ProviderDefinition[];
}

/** A registered command with the extension that owns it. */
export interface RegisteredCommand {
  name: string;
  extension: LoadedExtension;
  options: CommandOptions;
}

/**
 * The runner as thread bindings use it (`ExtensionRunner` implements it): its logger and API keys,
 * the context of the extension code running now, the enabled extensions, the commands, and
 * `disable`, which takes a failing extension out with a report (posted through `host` when given).
 */
export interface ExtensionRegistry {
  readonly logger: StructuredLogger;
  readonly getApiKey: ((provider: Provider) => string | undefined) | undefined;
  /** The deployment's settings policy (`ExtensionRunnerOptions.settingsPolicy`). */
  readonly settingsPolicy: SettingsPolicy | undefined;
  /** Masks secrets in what tools return (`ExtensionRunnerOptions.scrubToolOutput`). */
  readonly scrubToolOutput: ((text: string) => string) | undefined;
  readonly current: AsyncLocalStorage<ExtensionContext>;
  enabled(): LoadedExtension[];
  command(name: string): RegisteredCommand | undefined;
  disable(ext: LoadedExtension, phase: string, error: unknown, host?: ExtensionHost): void;
}
