import type { Api, ApiProvider, StreamOptions } from "./types.js";

interface RegisteredProvider {
  provider: ApiProvider<Api, StreamOptions>;
  sourceId: string | undefined;
}

const providers = new Map<string, RegisteredProvider>();

/**
 * Registers the provider that speaks `provider.api`, replacing any earlier one for that api.
 * `sourceId` tags the registration so that everything one extension registered can be removed
 * with `unregisterApiProviders(sourceId)` when it is disabled.
 */
export function registerApiProvider<TApi extends Api, TOptions extends StreamOptions>(
  provider: ApiProvider<TApi, TOptions>,
  sourceId?: string,
): void {
  providers.set(provider.api, { provider: provider as unknown as ApiProvider<Api, StreamOptions>, sourceId });
}

/** The provider registered for `api`, or undefined. */
export function getApiProvider(api: Api): ApiProvider<Api, StreamOptions> | undefined {
  return providers.get(api)?.provider;
}

/** Removes every provider registered with `sourceId`. Returns how many were removed. */
export function unregisterApiProviders(sourceId: string): number {
  let removed = 0;
  for (const [api, entry] of providers) {
    if (entry.sourceId === sourceId) {
      providers.delete(api);
      removed++;
    }
  }
  return removed;
}

/** The apis that have a provider, in registration order. */
export function listApiProviders(): Api[] {
  return [...providers.keys()];
}
