import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { type Tool, type ToolCall, validateToolArguments } from "../../src/agent/index.js";

const search: Tool = {
  name: "search",
  description: "Searches",
  parameters: Type.Object({
    query: Type.String(),
    limit: Type.Number(),
    exact: Type.Optional(Type.Boolean()),
    filters: Type.Optional(Type.Array(Type.Object({ field: Type.String(), value: Type.String() }))),
  }),
};

function call(args: Record<string, unknown>): ToolCall {
  return { type: "toolCall", id: "c1", name: "search", arguments: args };
}

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error("expected a validation error");
}

describe("validateToolArguments", () => {
  it("returns coerced arguments and leaves the tool call untouched", () => {
    const toolCall = call({ query: "cats", limit: "5", exact: "true" });
    expect(validateToolArguments(search, toolCall)).toEqual({ query: "cats", limit: 5, exact: true });
    expect(toolCall.arguments).toEqual({ query: "cats", limit: "5", exact: "true" });
  });

  it("names every failing path, including nested ones and missing properties, and shows what was received", () => {
    const text = errorOf(() =>
      validateToolArguments(
        search,
        call({ limit: "many", filters: [{ field: "a", value: "b" }, { field: 3 }] }),
      ),
    );
    expect(text).toBe(
      [
        'Invalid arguments for tool "search":',
        "  - /query: must have required property 'query'",
        "  - /limit: must be number",
        "  - /filters/1/value: must have required property 'value'",
        'Arguments received: {"limit":"many","filters":[{"field":"a","value":"b"},{"field":3}]}',
      ].join("\n"),
    );
  });

  it("truncates huge arguments in the error text", () => {
    const text = errorOf(() =>
      validateToolArguments(search, call({ query: "x".repeat(10_000), limit: "lots" })),
    );
    expect(text).toContain("/limit: must be number");
    expect(text.length).toBeLessThan(2_300);
    expect(text).toMatch(/… \(\d+ more characters\)$/);
  });

  it("reports a non-object argument value at the root", () => {
    const bad = { type: "toolCall", id: "c1", name: "search", arguments: "oops" } as unknown as ToolCall;
    expect(errorOf(() => validateToolArguments(search, bad))).toContain("(root): must be object");
  });

  it("gives the same answer on repeated calls (validators are cached per schema)", () => {
    for (let i = 0; i < 3; i++)
      expect(validateToolArguments(search, call({ query: "q", limit: i }))).toEqual({ query: "q", limit: i });
  });

  it("explains an invalid schema as the tool's fault", () => {
    const broken: Tool = { name: "broken", description: "", parameters: { type: "no-such-type" } as never };
    expect(errorOf(() => validateToolArguments(broken, call({})))).toMatch(
      /Tool "broken" has an invalid parameter schema/,
    );
  });
});
