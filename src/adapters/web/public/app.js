/**
 * The web chat page: conversation list, live message list (Server-Sent Events), approval buttons,
 * typing indicator, and the composer with command suggestions. Talks to the JSON API next to the
 * page (`api/…` under the base path the server puts in `<meta name="sb-base">`), sending the page's
 * CSRF token (`<meta name="sb-csrf">`) with every write. A conversation's address is `<base>c/<id>`,
 * so a bookmark reopens it. Files (the 📎 button, paste, or drop) are uploaded first
 * (`api/conversations/<id>/files`, the bytes as they are) and sent with the message by id; a
 * message's files show below its text, pictures inline, every file as a download link.
 *
 * State is applied idempotently: every message event carries the whole message and a version, so
 * the newest copy wins whatever order events and fetches arrive in.
 */
import { renderMarkdown } from "./markdown.js";

const APPROVALS = [
  { emoji: "✅", label: "Approve", cls: "approve" },
  { emoji: "❌", label: "Deny", cls: "deny" },
  { emoji: "♾️", label: "Always allow", cls: "always" },
];
const APPROVAL_EMOJI = new Set(APPROVALS.map((a) => a.emoji));

const base = document.querySelector('meta[name="sb-base"]')?.getAttribute("content") || "/";
const csrf = document.querySelector('meta[name="sb-csrf"]')?.getAttribute("content") || "";
const $ = (id) => document.getElementById(id);
const el = {
  conversations: $("conversations"),
  noConversations: $("no-conversations"),
  newConversation: $("new-conversation"),
  newGroup: $("new-group"),
  title: $("title"),
  kind: $("kind"),
  status: $("status"),
  alert: $("alert"),
  scroller: $("scroller"),
  empty: $("empty"),
  emptyTitle: $("empty-title"),
  emptyHint: $("empty-hint"),
  messages: $("messages"),
  typing: $("typing"),
  typingText: $("typing-text"),
  composer: $("composer"),
  input: $("input"),
  send: $("send"),
  attach: $("attach"),
  fileInput: $("file-input"),
  pending: $("pending"),
  suggestions: $("suggestions"),
  signInElsewhere: $("sign-in-elsewhere"),
  signOut: $("sign-out"),
  linkBox: $("link-box"),
  link: $("link"),
};

/** The conversation the address names: `<base>c/<id>`, or an older `#<id>` bookmark. */
function conversationInAddress() {
  const rest = location.pathname.startsWith(base) ? location.pathname.slice(base.length) : "";
  const m = /^c\/([a-z0-9]+)$/.exec(rest);
  if (m) return m[1];
  return location.hash.length > 1 ? decodeURIComponent(location.hash.slice(1)) : "";
}

const state = {
  me: { id: "", name: "you", isAdmin: false, botName: "Switchboard" },
  conversations: new Map(),
  current: conversationInAddress(),
  /**
   * A conversation being started ("direct" or "group"): made on the server with its first message,
   * so a message the chat refuses leaves no empty conversation behind. "" when none.
   */
  draft: "",
  messages: new Map(),
  deleted: new Set(),
  commands: [],
  typingUntil: new Map(),
  source: undefined,
  selected: 0,
};

// ── HTTP ────────────────────────────────────────────────────────────────

function randomId() {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

async function api(method, path, body) {
  const init = { method, headers: { accept: "application/json" }, credentials: "same-origin" };
  if (method !== "GET") init.headers["x-csrf-token"] = csrf;
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(base + path, init);
  // Signed out (the session ended, or the server forgot it): the page reloads into the sign-in form.
  if (res.status === 401) location.reload();
  let data = {};
  try {
    data = await res.json();
  } catch {
    data = {};
  }
  if (!res.ok) {
    const err = new Error(data.message || data.error || `The server answered ${res.status}.`);
    err.status = res.status;
    throw err;
  }
  return data;
}

/** Retries a request on network failure (not on an answer), a few times. */
async function withRetry(fn) {
  let lastError;
  for (let attempt = 0; attempt < 4; attempt++) {
    try {
      return await fn();
    } catch (err) {
      lastError = err;
      if (err.status !== undefined) throw err;
      await new Promise((r) => setTimeout(r, 300 * 2 ** attempt));
    }
  }
  throw lastError;
}

function showAlert(text) {
  el.alert.textContent = text;
  el.alert.hidden = !text;
}

// ── Live events ─────────────────────────────────────────────────────────

function connect() {
  state.source?.close();
  const query = state.current ? `?conversation=${encodeURIComponent(state.current)}` : "";
  const source = new EventSource(`${base}api/events${query}`);
  state.source = source;
  setStatus("Connecting…", "");
  source.addEventListener("open", () => setStatus("Connected", "online"));
  source.addEventListener("error", () => {
    setStatus("Reconnecting…", "offline");
    // The browser retries a dropped stream by itself, but gives up on an error answer (a restart
    // behind a proxy, a 401): try again later with a fresh stream.
    if (source.readyState === EventSource.CLOSED) {
      clearTimeout(connect.retry);
      connect.retry = setTimeout(async () => {
        if (state.source !== source) return;
        // A 401 here means the session is gone: api() reloads into the sign-in form.
        await api("GET", "api/session").catch(() => {});
        connect();
      }, 3000);
    }
  });
  source.addEventListener("snapshot", (e) => onSnapshot(JSON.parse(e.data)));
  source.addEventListener("conversation", (e) => upsertConversation(JSON.parse(e.data).conversation));
  source.addEventListener("conversation_removed", (e) =>
    removeConversation(JSON.parse(e.data).conversationId),
  );
  source.addEventListener("message", (e) => upsertMessage(JSON.parse(e.data).message));
  source.addEventListener("message_deleted", (e) => {
    const d = JSON.parse(e.data);
    if (d.conversationId !== state.current) return;
    state.deleted.add(d.messageId);
    state.messages.delete(d.messageId);
    document.querySelector(`[data-id="${CSS.escape(d.messageId)}"]`)?.remove();
    updateEmpty();
  });
  source.addEventListener("typing", (e) => {
    const d = JSON.parse(e.data);
    state.typingUntil.set(d.conversationId, Date.now() + d.durationMs);
    renderTyping();
  });
}

function setStatus(text, cls) {
  el.status.textContent = text;
  el.status.className = `status ${cls}`;
}

function onSnapshot(s) {
  setStatus("Connected", "online");
  state.me = s.me;
  state.commands = s.commands || [];
  el.input.placeholder = `Message ${s.me.botName}`;
  el.typingText.textContent = `${s.me.botName} is typing…`;
  state.conversations = new Map(s.conversations.map((c) => [c.id, c]));
  state.typingUntil = new Map(s.typing.map((t) => [t.conversationId, Date.now() + t.durationMs]));
  if (state.current && !state.conversations.has(state.current)) state.current = "";
  if (!state.current && !state.draft && s.conversations.length > 0) {
    select(s.conversations[0].id);
    return;
  }
  if (s.conversationId && s.conversationId === state.current) {
    state.messages = new Map(s.messages.map((m) => [m.id, m]));
    state.deleted = new Set();
    renderAllMessages();
  }
  renderConversations();
  renderHeader();
  renderTyping();
}

function upsertConversation(c) {
  state.conversations.set(c.id, c);
  renderConversations();
  if (c.id === state.current) renderHeader();
}

function removeConversation(id) {
  state.conversations.delete(id);
  if (id === state.current) select("");
  renderConversations();
}

function upsertMessage(m) {
  if (m.conversationId !== state.current || state.deleted.has(m.id)) return;
  const old = state.messages.get(m.id);
  if (old && old.version >= m.version) return;
  state.messages.set(m.id, m);
  const stick = nearBottom();
  const node = renderMessage(m);
  const existing = el.messages.querySelector(`[data-id="${CSS.escape(m.id)}"]`);
  if (existing) existing.replaceWith(node);
  else insertInOrder(node, m);
  updateEmpty();
  if (stick || (!old && !m.from.isBot)) scrollToBottom();
}

// ── Rendering ───────────────────────────────────────────────────────────

function renderConversations() {
  const list = [...state.conversations.values()].sort(
    (a, b) => b.updatedAt - a.updatedAt || b.createdAt - a.createdAt,
  );
  el.conversations.replaceChildren(
    ...list.map((c) => {
      const li = document.createElement("li");
      const button = document.createElement("button");
      button.type = "button";
      button.dataset.id = c.id;
      if (c.id === state.current) button.setAttribute("aria-current", "true");
      const title = document.createElement("span");
      title.className = "conv-title";
      title.textContent = c.title;
      button.append(title);
      if (c.kind === "group") {
        const badge = document.createElement("span");
        badge.className = "badge";
        badge.textContent = "group";
        button.append(badge);
      }
      button.addEventListener("click", () => select(c.id));
      li.append(button);
      return li;
    }),
  );
  el.noConversations.hidden = list.length > 0;
}

function renderHeader() {
  const c = state.conversations.get(state.current);
  const title = c ? c.title : state.draft ? "New conversation" : "Switchboard";
  el.title.textContent = title;
  const group = c ? c.kind === "group" : state.draft === "group";
  el.kind.hidden = !group;
  document.title = c || state.draft ? `${title} · Switchboard` : "Switchboard";
  el.input.placeholder = group ? `Write; @${state.me.botName} to ask the bot` : `Message ${state.me.botName}`;
  el.emptyTitle.textContent = group ? "A group conversation." : "Ask the agent anything.";
  el.emptyHint.textContent = group
    ? `${state.me.botName} answers messages that mention @${state.me.botName}, and commands.`
    : "Enter sends, Shift+Enter starts a new line. Type / for commands.";
}

function renderAllMessages() {
  const list = [...state.messages.values()].sort(order);
  el.messages.replaceChildren(...list.map(renderMessage));
  updateEmpty();
  scrollToBottom();
}

function order(a, b) {
  return a.createdAt - b.createdAt || Number(a.id.slice(1)) - Number(b.id.slice(1));
}

function insertInOrder(node, m) {
  for (const child of el.messages.children) {
    const other = state.messages.get(child.dataset.id);
    if (other && order(m, other) < 0) {
      el.messages.insertBefore(node, child);
      return;
    }
  }
  el.messages.append(node);
}

function updateEmpty() {
  el.empty.hidden = state.messages.size > 0;
}

const timeFormat = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });

function isToolStatus(m) {
  const lines = m.text.split("\n").filter((l) => l.trim() !== "");
  return m.from.isBot && lines.length > 0 && lines.every((l) => l.startsWith("🔧"));
}

function renderMessage(m) {
  const li = document.createElement("li");
  li.dataset.id = m.id;
  li.className = `msg ${m.from.isBot ? "bot" : "user"}${isToolStatus(m) ? " tools" : ""}`;
  const meta = document.createElement("div");
  meta.className = "meta";
  meta.textContent = `${m.from.isBot ? m.from.name : m.from.name || "you"} · ${timeFormat.format(new Date(m.createdAt))}`;
  if (m.editedAt !== undefined && !m.from.isBot) {
    const edited = document.createElement("span");
    edited.className = "edited";
    edited.textContent = " · edited";
    meta.append(edited);
  }
  const bubble = document.createElement("div");
  bubble.className = "bubble";
  if (m.format === "markdown") bubble.innerHTML = renderMarkdown(m.text);
  else bubble.textContent = m.text;
  li.append(meta, bubble);
  if (!m.text.trim() && (m.files ?? []).length > 0) bubble.hidden = true;
  const files = renderFiles(m);
  if (files) li.append(files);
  const approval = renderApproval(m);
  if (approval) li.append(approval);
  const others = m.reactions.filter((r) => !(r.bot && APPROVAL_EMOJI.has(r.emoji)) || !m.from.isBot);
  if (others.length > 0) {
    const row = document.createElement("div");
    row.className = "reactions";
    for (const r of others) {
      const chip = document.createElement("span");
      chip.className = "reaction";
      const count = (r.bot ? 1 : 0) + r.users.length;
      chip.textContent = count > 1 ? `${r.emoji} ${count}` : r.emoji;
      const who = [
        ...(r.bot ? [state.me.botName] : []),
        ...r.users.map((u) => (u === state.me.id ? "you" : u)),
      ];
      chip.title = `${r.emoji} by ${who.join(", ")}`;
      chip.setAttribute("aria-label", chip.title);
      row.append(chip);
    }
    li.append(row);
  }
  return li;
}

const PICTURES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

function fileUrl(m, f) {
  return `${base}api/conversations/${encodeURIComponent(m.conversationId)}/files/${encodeURIComponent(f.id)}`;
}

function sizeText(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** A message's files: pictures shown, every file a download link with its name and size. */
function renderFiles(m) {
  const files = m.files ?? [];
  if (files.length === 0) return undefined;
  const list = document.createElement("div");
  list.className = "files";
  for (const f of files) {
    const item = document.createElement("figure");
    item.className = "file";
    if (PICTURES.has(f.type)) {
      const img = document.createElement("img");
      img.src = fileUrl(m, f);
      img.alt = f.name;
      img.loading = "lazy";
      item.append(img);
    }
    const link = document.createElement("a");
    link.href = fileUrl(m, f);
    link.download = f.name;
    link.textContent = `📄 ${f.name}`;
    const size = document.createElement("span");
    size.className = "muted small";
    size.textContent = ` ${sizeText(f.size)}`;
    const caption = document.createElement("figcaption");
    caption.append(link, size);
    item.append(caption);
    list.append(item);
  }
  return list;
}

/** Buttons standing in for the reactions an approval request asks for (the bot's own ✅ ❌ ♾️). */
function renderApproval(m) {
  if (!m.from.isBot) return undefined;
  const offered = APPROVALS.filter((a) => m.reactions.some((r) => r.bot && r.emoji === a.emoji));
  if (offered.length === 0) return undefined;
  const chosen = offered.find((a) =>
    m.reactions.some((r) => r.emoji === a.emoji && r.users.includes(state.me.id)),
  );
  const group = document.createElement("div");
  group.className = "approval";
  group.setAttribute("role", "group");
  group.setAttribute("aria-label", "Approval");
  for (const a of offered) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = a.cls;
    b.textContent = `${a.emoji} ${a.label}`;
    b.setAttribute("aria-label", a.label);
    b.setAttribute("aria-pressed", chosen === a ? "true" : "false");
    b.disabled = Boolean(chosen) || !state.me.isAdmin;
    b.addEventListener("click", () => react(m, a.emoji, b));
    group.append(b);
  }
  if (!state.me.isAdmin) {
    const note = document.createElement("span");
    note.className = "note";
    note.textContent = `Only admins decide (add ${state.me.id} to channels.web.admins).`;
    group.append(note);
  }
  return group;
}

async function react(m, emoji, button) {
  button.disabled = true;
  try {
    const data = await withRetry(() =>
      api(
        "POST",
        `api/conversations/${encodeURIComponent(m.conversationId)}/messages/${encodeURIComponent(m.id)}/reactions`,
        { emoji, added: true },
      ),
    );
    if (data.message) upsertMessage(data.message);
    showAlert("");
  } catch (err) {
    button.disabled = false;
    showAlert(`Could not send the reaction: ${err.message}`);
  }
}

function renderTyping() {
  const until = state.typingUntil.get(state.current) || 0;
  const left = until - Date.now();
  el.typing.hidden = left <= 0;
  clearTimeout(renderTyping.timer);
  if (left > 0) renderTyping.timer = setTimeout(renderTyping, left + 20);
}

function nearBottom() {
  const s = el.scroller;
  return s.scrollHeight - s.scrollTop - s.clientHeight < 80;
}

function scrollToBottom() {
  el.scroller.scrollTop = el.scroller.scrollHeight;
}

// ── Conversations ───────────────────────────────────────────────────────

async function select(id) {
  if (id) state.draft = "";
  if (id === state.current && state.source && state.source.readyState !== EventSource.CLOSED) return;
  state.current = id;
  state.messages = new Map();
  state.deleted = new Set();
  el.messages.replaceChildren();
  updateEmpty();
  history.replaceState(null, "", id ? `${base}c/${encodeURIComponent(id)}` : base);
  renderConversations();
  renderHeader();
  renderTyping();
  // A fresh stream: its snapshot carries this conversation's messages.
  connect();
}

/** "+ New chat": an empty conversation to write into; the server makes it with the first message. */
function startDraft(kind) {
  state.draft = kind;
  select("");
  renderHeader();
  showAlert("");
  el.input.focus();
}

// ── Composer ────────────────────────────────────────────────────────────

/** Files picked, pasted or dropped, waiting for the next send. */
const pending = [];

function renderPending() {
  el.pending.replaceChildren(
    ...pending.map((file, i) => {
      const li = document.createElement("li");
      li.className = "chip";
      li.textContent = `📄 ${file.name} (${sizeText(file.size)})`;
      const remove = document.createElement("button");
      remove.type = "button";
      remove.className = "secondary small";
      remove.textContent = "×";
      remove.setAttribute("aria-label", `Remove ${file.name}`);
      remove.addEventListener("click", () => {
        pending.splice(i, 1);
        renderPending();
      });
      li.append(remove);
      return li;
    }),
  );
  el.pending.hidden = pending.length === 0;
}

function addFiles(list) {
  for (const file of list) if (file.size > 0) pending.push(file);
  renderPending();
}

/** Uploads one file to a conversation; the file as the server stored it. */
async function upload(id, file) {
  const res = await fetch(`${base}api/conversations/${encodeURIComponent(id)}/files`, {
    method: "POST",
    headers: {
      "content-type": "application/octet-stream",
      "x-csrf-token": csrf,
      "x-file-name": encodeURIComponent(file.name || "pasted"),
    },
    body: file,
    credentials: "same-origin",
  });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(data.message || `HTTP ${res.status}`);
  return data.file;
}

async function send() {
  const text = el.input.value;
  const files = pending.splice(0);
  if (!text.trim() && files.length === 0) return;
  hideSuggestions();
  let id = state.current;
  const clientId = randomId();
  el.input.value = "";
  autosize();
  renderPending();
  try {
    if (!id && files.length === 0) {
      // The first message starts the conversation; refused, it starts none. Not retried blindly:
      // a request that reached the server made a conversation already.
      const data = await api("POST", "api/conversations", { kind: state.draft || "direct", text, clientId });
      upsertConversation(data.conversation);
      await select(data.conversation.id);
      if (data.message) upsertMessage(data.message);
    } else {
      if (!id) {
        // Files are uploaded into a conversation, so a first message with files makes it first.
        const made = await api("POST", "api/conversations", { kind: state.draft || "direct" });
        upsertConversation(made.conversation);
        await select(made.conversation.id);
        id = made.conversation.id;
      }
      const uploaded = [];
      for (const f of files) uploaded.push(await upload(id, f));
      const body = {
        text,
        clientId,
        ...(uploaded.length > 0 ? { files: uploaded.map((f) => ({ id: f.id, name: f.name })) } : {}),
      };
      const data = await withRetry(() =>
        api("POST", `api/conversations/${encodeURIComponent(id)}/messages`, body),
      );
      if (data.message && id === state.current) upsertMessage(data.message);
    }
    showAlert("");
  } catch (err) {
    if (!el.input.value) el.input.value = text;
    pending.unshift(...files);
    renderPending();
    autosize();
    showAlert(`Not sent: ${err.message}`);
  }
}

function autosize() {
  el.input.style.height = "auto";
  el.input.style.height = `${Math.min(el.input.scrollHeight + 2, window.innerHeight * 0.4)}px`;
}

function matchingCommands() {
  const m = /^\/(\w*)$/.exec(el.input.value);
  if (!m) return [];
  const prefix = m[1].toLowerCase();
  return state.commands.filter((c) => c.name.startsWith(prefix));
}

function renderSuggestions() {
  const list = matchingCommands();
  if (list.length === 0) return hideSuggestions();
  state.selected = Math.min(state.selected, list.length - 1);
  el.suggestions.replaceChildren(
    ...list.map((c, i) => {
      const li = document.createElement("li");
      li.setAttribute("role", "option");
      li.id = `cmd-${c.name}`;
      li.setAttribute("aria-selected", i === state.selected ? "true" : "false");
      const name = document.createElement("span");
      name.className = "cmd";
      name.textContent = `/${c.name}`;
      const desc = document.createElement("span");
      desc.className = "desc";
      desc.textContent = c.description;
      li.append(name, desc);
      li.addEventListener("mousedown", (e) => {
        e.preventDefault();
        complete(c);
      });
      return li;
    }),
  );
  el.suggestions.hidden = false;
  el.input.setAttribute("aria-activedescendant", `cmd-${list[state.selected].name}`);
}

function hideSuggestions() {
  el.suggestions.hidden = true;
  el.input.removeAttribute("aria-activedescendant");
  state.selected = 0;
}

function complete(c) {
  el.input.value = `/${c.name} `;
  hideSuggestions();
  el.input.focus();
}

el.input.addEventListener("input", () => {
  autosize();
  renderSuggestions();
});
el.input.addEventListener("keydown", (e) => {
  const open = !el.suggestions.hidden;
  const list = open ? matchingCommands() : [];
  if (open && (e.key === "ArrowDown" || e.key === "ArrowUp")) {
    e.preventDefault();
    state.selected = (state.selected + (e.key === "ArrowDown" ? 1 : list.length - 1)) % list.length;
    renderSuggestions();
    return;
  }
  if (open && e.key === "Tab" && list.length > 0) {
    e.preventDefault();
    complete(list[state.selected]);
    return;
  }
  if (open && e.key === "Escape") {
    hideSuggestions();
    return;
  }
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    if (open && list.length > 0 && !/\s/.test(el.input.value)) {
      // "/mo" + Enter picks the highlighted command; "/model" with nothing to add sends it.
      const pick = list[state.selected];
      if (`/${pick.name}` !== el.input.value.trim()) {
        complete(pick);
        return;
      }
    }
    send();
  }
});
el.composer.addEventListener("submit", (e) => {
  e.preventDefault();
  send();
});
el.attach.addEventListener("click", () => el.fileInput.click());
el.fileInput.addEventListener("change", () => {
  addFiles(el.fileInput.files ?? []);
  el.fileInput.value = "";
});
el.input.addEventListener("paste", (e) => {
  const files = [...(e.clipboardData?.files ?? [])];
  if (files.length === 0) return;
  e.preventDefault();
  addFiles(files);
});
for (const target of [el.composer, el.scroller]) {
  target.addEventListener("dragover", (e) => {
    if (!e.dataTransfer?.types.includes("Files")) return;
    e.preventDefault();
    el.composer.classList.add("dropping");
  });
  target.addEventListener("dragleave", () => el.composer.classList.remove("dropping"));
  target.addEventListener("drop", (e) => {
    el.composer.classList.remove("dropping");
    if (!e.dataTransfer?.files.length) return;
    e.preventDefault();
    addFiles(e.dataTransfer.files);
  });
}
el.newConversation.addEventListener("click", () => startDraft("direct"));
el.newGroup.addEventListener("click", () => startDraft("group"));
window.addEventListener("hashchange", () => {
  const id = conversationInAddress();
  if (id !== state.current) select(id);
});
window.addEventListener("popstate", () => {
  const id = conversationInAddress();
  if (id !== state.current) select(id);
});
el.signInElsewhere.addEventListener("click", async () => {
  try {
    const data = await api("POST", "api/sign-in-links", {});
    el.link.value = data.url;
    el.linkBox.hidden = false;
    el.link.focus();
    el.link.select();
  } catch (err) {
    showAlert(`Could not make a sign-in link: ${err.message}`);
  }
});
el.signOut.addEventListener("click", async () => {
  await api("POST", "api/sign-out", {}).catch(() => {});
  location.reload();
});

if (state.current && location.hash)
  history.replaceState(null, "", `${base}c/${encodeURIComponent(state.current)}`);
connect();
el.input.focus();
