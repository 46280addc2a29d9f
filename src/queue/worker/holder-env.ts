/**
 * What every holder of one worker process shares (`HolderEnv`) and how the runtime compacts
 * sessions (`CompactionConfig`): types only, in a module of their own so the holder's parts
 * (session, compactor, control watch, run driver, session commands) import them without importing
 * the holder that composes them.
 */

import type { Model } from "../../agent/llm/types.js";
import type { CompactionSettings, CompactOptions, CompleteFn } from "../../agent/session/compaction/index.js";
import type { RenderJournal } from "../state/render-journal.js";
import type { SessionStore } from "../store/types.js";
import type {
  AgentFactory,
  AttachmentIngest,
  InboundFormatter,
  ModelResolver,
  OwedRenderFinisher,
  RunObserver,
  RunSinkFactory,
} from "../types.js";
import type { AgentCache } from "./agent-cache.js";
import type { TenureEnv } from "./tenure.js";

/** How the runtime compacts sessions. */
export interface CompactionConfig {
  /** Thresholds; default `DEFAULT_COMPACTION_SETTINGS` (`enabled: false` turns automatic compaction off). */
  settings?: CompactionSettings;
  /** The summary request; default `complete` of the provider registry. */
  complete?: CompleteFn;
  /** Request options for the model (API key, headers). */
  options?: (model: Model) => CompactOptions | Promise<CompactOptions>;
}

/** What a holder needs for the journal; both are set together or not at all. */
export interface RenderJournalEnv {
  journal?: RenderJournal | undefined;
  finishOwed?: OwedRenderFinisher | undefined;
}

/** Everything a holder needs; shared by all holders of one worker process. */
export interface HolderEnv extends TenureEnv, RenderJournalEnv {
  store: SessionStore;
  cache: AgentCache;
  factory: AgentFactory;
  sinks: RunSinkFactory;
  format: InboundFormatter;
  resolveModel: ModelResolver;
  fenceKey: (threadKey: string) => string;
  controlPollMs: number;
  compaction: CompactionConfig | undefined;
  /** Fetches the files of taken messages before they are formatted; absent: files are only named. */
  attachments?: AttachmentIngest | undefined;
  /** Hears how each run ended and when an owed render was finished later (scheduled prompts). */
  runObserver?: RunObserver | undefined;
}
