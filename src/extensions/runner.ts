/**
 * The extension runner: loads extensions once per process, keeps what each registered (handlers,
 * tools, wrappers, commands, providers), and disables an extension that fails, with a report,
 * without taking the process down. `bind(host)` gives the per-thread view (`ThreadExtensions`) that
 * turns the registrations into the engine's hooks, tools and commands.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { TSchema } from "@sinclair/typebox";
import { errorText } from "../agent/errors.js";
import { registerModel, unregisterModel } from "../agent/llm/models.js";
import { registerApiProvider, unregisterApiProviders } from "../agent/llm/registry.js";
import type { Provider } from "../agent/llm/types.js";
import type { StructuredLogger } from "../agent/logger.js";
import { consoleLogger } from "./logger.js";
import type { ExtensionRegistry, LoadedExtension, RegisteredCommand } from "./registry.js";
import { ThreadExtensions, type ThreadExtensionsOptions } from "./thread.js";
import type {
  CommandInfo,
  CommandOptions,
  ExtensionAPI,
  ExtensionContext,
  ExtensionEntry,
  ExtensionEventType,
  ExtensionFailure,
  ExtensionHandler,
  ExtensionHost,
  SettingsPolicy,
  ToolDefinition,
} from "./types.js";

export interface ExtensionRunnerOptions {
  logger?: StructuredLogger;
  /** Called for every failure (load or handler) after the extension was disabled; must not throw. */
  onFailure?: (failure: ExtensionFailure) => void;
  /** API keys besides the environment's, for "has credentials" checks of `setModel`. */
  getApiKey?: (provider: Provider) => string | undefined;
  /** Who may change a thread's model or thinking level, on every route. Default: everyone. */
  settingsPolicy?: SettingsPolicy;
  /** Masks secrets in the text of every tool result before the model, the session or the chat see it. */
  scrubToolOutput?: (text: string) => string;
}

const COMMAND_NAME = /^[a-z][a-z0-9_-]{0,31}$/;

/**
 * Loads extensions and hands out per-thread bindings. One instance per process; extensions'
 * factories run once, in load order, which is also the order their handlers run in.
 */
export class ExtensionRunner implements ExtensionRegistry {
  readonly logger: StructuredLogger;
  readonly getApiKey: ((provider: Provider) => string | undefined) | undefined;
  readonly settingsPolicy: SettingsPolicy | undefined;
  readonly scrubToolOutput: ((text: string) => string) | undefined;
  /** The context of the handler running now, so that `api.sendMessage` & co. find their thread. */
  readonly current = new AsyncLocalStorage<ExtensionContext>();
  private readonly loaded: LoadedExtension[] = [];
  private readonly commandMap = new Map<string, RegisteredCommand>();
  private readonly onFailure: ((failure: ExtensionFailure) => void) | undefined;

  constructor(options: ExtensionRunnerOptions = {}) {
    this.logger = options.logger ?? consoleLogger;
    this.onFailure = options.onFailure;
    this.getApiKey = options.getApiKey;
    this.settingsPolicy = options.settingsPolicy;
    this.scrubToolOutput = options.scrubToolOutput;
  }

  /**
   * Runs each entry's factory. A factory that throws (or rejects) disables its extension with a
   * report; what it registered before failing is removed. Never rejects.
   */
  async load(entries: readonly ExtensionEntry[]): Promise<void> {
    for (const entry of entries) {
      if (this.loaded.some((e) => e.name === entry.name)) {
        this.report({
          extension: entry.name,
          phase: "load",
          error: `An extension named "${entry.name}" is already loaded; rename one of them.`,
        });
        continue;
      }
      const ext: LoadedExtension = {
        name: entry.name,
        enabled: true,
        handlers: new Map(),
        tools: [],
        toolSources: [],
        wrappers: [],
        providers: [],
      };
      this.loaded.push(ext);
      try {
        await entry.factory(this.createApi(ext, entry.options));
      } catch (e) {
        this.disable(ext, "load", e);
      }
    }
  }

  /** Every loaded extension in load order, enabled or not. */
  extensions(): readonly LoadedExtension[] {
    return this.loaded;
  }

  /** Enabled extensions in load order. */
  enabled(): LoadedExtension[] {
    return this.loaded.filter((e) => e.enabled);
  }

  /** The enabled command `name` (or alias), case-insensitive. */
  command(name: string): RegisteredCommand | undefined {
    const found = this.commandMap.get(name.toLowerCase());
    return found?.extension.enabled ? found : undefined;
  }

  /** Enabled commands (primary names only) in registration order. */
  commands(): RegisteredCommand[] {
    const seen = new Set<RegisteredCommand>();
    for (const c of this.commandMap.values()) if (c.extension.enabled) seen.add(c);
    return [...seen];
  }

  /** Name and description of each command, for native command menus (`ChannelAdapter.registerCommands`). */
  commandSpecs(): { name: string; description: string }[] {
    return this.commands().map((c) => ({ name: c.name, description: c.options.description }));
  }

  /** The per-thread view: hooks, tools, commands and events of `host`'s thread. */
  bind(host: ExtensionHost, options: ThreadExtensionsOptions = {}): ThreadExtensions {
    return new ThreadExtensions(this, host, options);
  }

  /**
   * Disables `ext` because of `error` in `phase`: its handlers, tools, wrappers and commands stop
   * applying, its providers and models are unregistered, and the failure is logged, passed to
   * `onFailure` and (with a host) posted into the thread as a short notice.
   */
  disable(ext: LoadedExtension, phase: string, error: unknown, host?: ExtensionHost): void {
    if (!ext.enabled) return;
    ext.enabled = false;
    const failure: ExtensionFailure = { extension: ext.name, phase, error: errorText(error) };
    if (host) failure.threadKey = host.thread.threadKey;
    ext.failure = failure;
    unregisterApiProviders(sourceIdOf(ext));
    for (const p of ext.providers) for (const m of p.models ?? []) unregisterModel(m.provider, m.id);
    this.report(failure, error);
    if (host) {
      host
        .post(`⚠️ Extension "${ext.name}" failed (${phase}) and was disabled: ${failure.error}`, {
          format: "plain",
        })
        .catch((e: unknown) =>
          this.logger.warn({ err: e, extension: ext.name }, "could not post the failure notice"),
        );
    }
  }

  /** Logs `failure` with the error object under `err` (its stack says where), and tells `onFailure`. */
  private report(failure: ExtensionFailure, err: unknown = new Error(failure.error)): void {
    const { error: _text, ...where } = failure;
    this.logger.error({ ...where, err }, `extension "${failure.extension}" failed and was disabled`);
    try {
      this.onFailure?.(failure);
    } catch (e) {
      this.logger.warn({ err: e }, "onFailure callback threw");
    }
  }

  private currentContext(what: string): ExtensionContext {
    const ctx = this.current.getStore();
    if (!ctx) {
      throw new Error(
        `api.${what} was called outside a handler, command or tool, so there is no thread to act on. ` +
          "Call it from inside one, or use the ctx argument the handler receives.",
      );
    }
    return ctx;
  }

  private createApi(ext: LoadedExtension, options: unknown): ExtensionAPI {
    const runner = this;
    const live = () => {
      if (!ext.enabled)
        throw new Error(`Extension "${ext.name}" is disabled; it can no longer register anything.`);
    };
    return {
      name: ext.name,
      options,
      logger: this.logger,
      on(event, handler) {
        live();
        const list = ext.handlers.get(event) ?? [];
        list.push(handler as unknown as ExtensionHandler<ExtensionEventType>);
        ext.handlers.set(event, list);
      },
      registerTool<TParams extends TSchema, TDetails>(definition: ToolDefinition<TParams, TDetails>) {
        live();
        if (!definition.name || !/^[a-zA-Z0-9_-]{1,64}$/.test(definition.name)) {
          throw new Error(`Tool name "${definition.name}" is invalid: use 1-64 letters, digits, "_" or "-".`);
        }
        ext.tools.push(definition as unknown as ToolDefinition);
      },
      registerToolSource(source) {
        live();
        ext.toolSources.push(source);
      },
      wrapTool(name, wrapper) {
        live();
        ext.wrappers.push({ name, wrapper });
      },
      registerCommand(name, commandOptions) {
        live();
        runner.addCommand(ext, name, commandOptions);
      },
      registerProvider(provider) {
        live();
        registerApiProvider(
          { api: provider.api, stream: provider.stream, streamSimple: provider.streamSimple },
          sourceIdOf(ext),
        );
        ext.providers.push(provider);
        for (const m of provider.models ?? []) registerModel(m);
      },
      getCommands: () =>
        this.commands().map((c) => {
          const info: CommandInfo = {
            name: c.name,
            description: c.options.description,
            aliases: c.options.aliases ?? [],
            extension: c.extension.name,
          };
          if (c.options.usage) info.usage = c.options.usage;
          return info;
        }),
      get thread() {
        return runner.currentContext("thread").thread;
      },
      // Async so that a call outside a handler rejects like every other failure of these methods.
      sendMessage: async (message, opts) => this.currentContext("sendMessage").sendMessage(message, opts),
      appendEntry: async (customType, data) =>
        this.currentContext("appendEntry").appendEntry(customType, data),
      setModel: async (model) => this.currentContext("setModel").setModel(model),
      getThinkingLevel: async () => this.currentContext("getThinkingLevel").getThinkingLevel(),
      setThinkingLevel: async (level) => this.currentContext("setThinkingLevel").setThinkingLevel(level),
    };
  }

  private addCommand(ext: LoadedExtension, name: string, options: CommandOptions): void {
    const names = [name, ...(options.aliases ?? [])].map((n) => n.toLowerCase());
    for (const n of names) {
      if (!COMMAND_NAME.test(n)) {
        throw new Error(
          `Command name "${n}" is invalid: use a lower-case letter then up to 31 of a-z, 0-9, "_", "-".`,
        );
      }
      const taken = this.commandMap.get(n);
      if (taken?.extension.enabled) {
        throw new Error(`Command "/${n}" is already registered by extension "${taken.extension.name}".`);
      }
    }
    const command: RegisteredCommand = { name: name.toLowerCase(), extension: ext, options };
    for (const n of names) this.commandMap.set(n, command);
  }
}

/** The registry tag of an extension's providers. */
function sourceIdOf(ext: Pick<LoadedExtension, "name">): string {
  return `extension:${ext.name}`;
}
