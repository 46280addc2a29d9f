/** Types of the page's Markdown renderer (plain browser JavaScript in markdown.js). */

/** Escapes text for HTML content and attribute values. */
export function escapeHtml(text: string): string;
/** Renders one line's inline markup (code, bold, italics, strike-through, links). */
export function renderInline(raw: string): string;
/** Renders Markdown to HTML that is safe to assign to `innerHTML`. */
export function renderMarkdown(source: string): string;
