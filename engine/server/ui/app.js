// capdex console: a few pages over the daemon's JSON API. No framework, no inline script or
// style (the Content-Security-Policy forbids them), no data in URLs but ids. The API key is
// kept in sessionStorage and sent as a header.
"use strict";

(function () {
  const KEY = "capdex.key";
  const SVGNS = "http://www.w3.org/2000/svg";
  let me = null; // the answer of /v1/console/whoami

  // ---- DOM helpers (text only: nothing from the server is parsed as HTML) ----
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "on") { for (const [ev, fn] of Object.entries(v)) e.addEventListener(ev, fn); continue; }
      if (k === "class") { e.className = v; continue; }
      e.setAttribute(k, v === true ? "" : String(v));
    }
    add(e, kids);
    return e;
  }
  function add(e, kids) {
    for (const k of kids.flat(Infinity)) {
      if (k === undefined || k === null || k === false) continue;
      e.appendChild(k instanceof Node ? k : document.createTextNode(String(k)));
    }
    return e;
  }
  function svg(tag, attrs, ...kids) {
    const e = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v !== undefined && v !== null) e.setAttribute(k, String(v));
    }
    for (const k of kids.flat(Infinity)) {
      if (k === undefined || k === null) continue;
      e.appendChild(k instanceof Node ? k : document.createTextNode(String(k)));
    }
    return e;
  }
  const $ = (id) => document.getElementById(id);
  function page(...kids) {
    const p = $("page");
    p.replaceChildren();
    add(p, kids);
  }
  function badge(text, color, title) { return el("span", { class: "badge " + (color || ""), title }, text); }
  function note(text, kind, id) { return el("div", { class: "note " + (kind || ""), id }, text); }
  function notAvailable(what) {
    return note(what + " is not available on this server.", "warn", "not-available");
  }
  function fmtTime(t) {
    if (!t) return "—";
    const d = new Date(t);
    return isNaN(d) ? String(t) : d.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
  }
  function fmtUS(us) {
    if (!us) return "";
    return us < 1000 ? us + " µs" : (us / 1000).toFixed(1) + " ms";
  }
  function fmtNum(x, digits) { return typeof x === "number" ? x.toFixed(digits === undefined ? 4 : digits) : "—"; }
  function pct(x) { return typeof x === "number" ? (x * 100).toFixed(1) + "%" : "—"; }
  function json(v) { return JSON.stringify(v, null, 2); }

  // ---- API ----
  class APIError extends Error {
    constructor(status, code, message) { super(message); this.status = status; this.code = code; }
  }
  async function call(method, path, body, accept) {
    const headers = { "Authorization": "Bearer " + sessionStorage.getItem(KEY) };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (accept) headers["Accept"] = accept;
    const resp = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: "no-store", credentials: "omit" });
    if (resp.status === 401) {
      signOut("The key was refused (401). Sign in again.");
      throw new APIError(401, "unauthorized", "unauthorized");
    }
    return resp;
  }
  async function api(method, path, body) {
    const resp = await call(method, path, body);
    let data = null;
    const text = await resp.text();
    try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
    if (!resp.ok) {
      const err = data && data.error ? data.error : { code: "http_" + resp.status, message: text || resp.statusText };
      throw new APIError(resp.status, err.code, err.message);
    }
    return data;
  }
  function showError(e) {
    if (e instanceof APIError && e.status === 401) return el("span");
    return note(e instanceof APIError ? `${e.status} ${e.code}: ${e.message}` : String(e), "bad", "error");
  }

  // ---- sign in ----
  async function signIn(key) {
    sessionStorage.setItem(KEY, key);
    try {
      me = await api("GET", "/v1/console/whoami");
    } catch (e) {
      sessionStorage.removeItem(KEY);
      me = null;
      throw e;
    }
    $("login").hidden = true;
    $("nav").hidden = false;
    $("who").hidden = false;
    $("who-name").textContent = `${me.user}@${me.tenant}` + (me.admin ? " (admin)" : "") + ` · key ${me.key_id}`;
    document.body.dataset.admin = me.admin ? "yes" : "no";
    route();
  }
  function signOut(msg) {
    sessionStorage.removeItem(KEY);
    me = null;
    $("nav").hidden = true;
    $("who").hidden = true;
    $("page").replaceChildren();
    $("login").hidden = false;
    $("login-error").textContent = msg || "";
    $("key").value = "";
    $("key").focus();
  }

  // ---- router ----
  const pages = {
    registry: pageRegistry, cap: pageCapability, search: pageSearch, quarantine: pageQuarantine,
    upstreams: pageUpstreams, audit: pageAudit, quality: pageQuality,
  };
  function route() {
    if (!me) return;
    const h = location.hash.replace(/^#\/?/, "");
    const [name, ...rest] = h.split("/");
    const fn = pages[name] || pageRegistry;
    for (const a of document.querySelectorAll("nav a")) {
      a.classList.toggle("on", a.dataset.page === (name === "cap" ? "registry" : name || "registry"));
    }
    page(el("p", { class: "muted" }, "Loading…"));
    Promise.resolve(fn(decodeURIComponent(rest.join("/")))).catch((e) => page(showError(e)));
  }

  // ---- Registry ----
  const gateLetters = { discover: "D", describe: "S", execute: "X" };
  function gateMarks(gates) {
    return ["discover", "describe", "execute"].map((g) => {
      const v = gates[g] || {};
      return el("span", { class: "gate " + (v.allowed ? "yes" : "no"), title: `${g}: ${v.reason || ""}` }, gateLetters[g]);
    });
  }
  function statusBadge(s) {
    return badge(s || "active", s === "offline" ? "red" : s === "deprecated" ? "amber" : "green", "status");
  }
  function healthBadge(h) {
    if (!h || !h.status) return badge("health —", "", "no health check recorded");
    const c = h.status === "up" ? "green" : h.status === "degraded" ? "amber" : "red";
    return badge("health " + h.status, c, [h.message, h.checked_at].filter(Boolean).join(" · "));
  }
  function availBadge(a) {
    const c = a === "available" ? "green" : a === "needs_confirmation" || a === "missing_credentials" ? "amber" : "red";
    return badge(a || "available", c, "availability for this key");
  }
  function nodeRow(n) {
    return el("div", { class: "node", "data-id": n.id },
      badge(n.type, n.type === "pack" ? "blue" : ""),
      el("a", { class: "id", href: "#/cap/" + encodeURIComponent(n.id) }, n.id),
      el("span", { class: "title" }, n.title),
      n.type === "pack" ? badge(`${n.descendants} below`, "", `${n.children} direct children, ${n.descendants} in the subtree`) : null,
      n.side_effect ? badge(n.side_effect, n.side_effect === "R" ? "" : "amber", "side effect") : null,
      statusBadge(n.status), healthBadge(n.health), availBadge(n.availability),
      n.enabled ? null : badge("disabled", "red"),
      el("span", { class: "gates" }, gateMarks(n.gates)));
  }
  async function pageRegistry() {
    const tree = await api("GET", "/v1/console/tree");
    const kids = new Map();
    for (const n of tree.nodes) {
      const p = n.parent || "";
      if (!kids.has(p)) kids.set(p, []);
      kids.get(p).push(n);
    }
    const build = (parent, depth) => el("ul", { class: "tree" }, (kids.get(parent) || []).map((n) => {
      if (!kids.has(n.id)) return el("li", {}, nodeRow(n));
      return el("li", {}, el("details", { open: depth < 1 ? true : null }, el("summary", {}, nodeRow(n)), build(n.id, depth + 1)));
    }));
    const count = (t) => tree.nodes.filter((n) => n.type === t).length;
    const box = el("div", { class: "card", id: "tree" }, tree.nodes.length ? build("", 0) : el("p", {}, "This key may discover nothing."));
    // The filter lists the matching nodes flat (id, title); empty, it shows the tree again.
    const filter = el("input", { id: "tree-filter", type: "search", placeholder: "filter by id or title", class: "wide" });
    filter.addEventListener("input", () => {
      const q = filter.value.trim().toLowerCase();
      if (!q) { box.replaceChildren(build("", 0)); return; }
      const hits = tree.nodes.filter((n) => n.id.toLowerCase().includes(q) || (n.title || "").toLowerCase().includes(q));
      box.replaceChildren(el("p", { class: "muted", id: "filter-count" }, `${hits.length} of ${tree.nodes.length} nodes`),
        el("ul", { class: "tree" }, hits.slice(0, 500).map((n) => el("li", {}, nodeRow(n)))));
    });
    page(
      el("h1", {}, "Registry"),
      el("div", { class: "stats" },
        stat(tree.nodes.length, "visible to this key"), stat(count("pack"), "packs"), stat(count("action"), "actions"),
        stat(count("recipe"), "recipes"), stat(tree.generation, "generation")),
      el("p", { class: "muted" }, "Gates for this key: D discover, S describe (show), X execute; hover for the reason."),
      filter, box);
  }
  function stat(v, label) { return el("div", { class: "stat" }, el("b", {}, v), el("span", {}, label)); }

  // ---- Capability ----
  function schemaView(schema) {
    if (!schema) return el("p", { class: "muted" }, "none");
    const rows = [];
    const walk = (s, prefix, required) => {
      const props = s && s.properties ? s.properties : {};
      for (const [name, p] of Object.entries(props)) {
        const path = prefix ? prefix + "." + name : name;
        const type = p.type ? [].concat(p.type).join(" | ") : p.enum ? "enum" : p.$ref ? p.$ref : "any";
        const bits = [];
        if (p.enum) bits.push("one of " + p.enum.map((x) => JSON.stringify(x)).join(", "));
        if (p.default !== undefined) bits.push("default " + JSON.stringify(p.default));
        if (p.pattern) bits.push("pattern " + p.pattern);
        if (p.minimum !== undefined) bits.push("≥ " + p.minimum);
        if (p.maximum !== undefined) bits.push("≤ " + p.maximum);
        if (p.format) bits.push("format " + p.format);
        rows.push(el("tr", {},
          el("td", {}, path, (required || []).includes(name) ? el("span", { class: "req" }, "required") : null),
          el("td", {}, type + (p.items && p.items.type ? " of " + p.items.type : "")),
          el("td", {}, p.description || "", bits.length ? el("div", { class: "muted" }, bits.join("; ")) : null)));
        if (p.type === "object" && p.properties) walk(p, path, p.required);
        if (p.items && p.items.properties) walk(p.items, path + "[]", p.items.required);
      }
    };
    walk(schema, "", schema.required);
    const extra = schema.additionalProperties === false ? el("p", { class: "muted" }, "No other properties are accepted.") : null;
    return el("div", {},
      rows.length ? el("table", { class: "schema" }, el("tr", {}, el("th", {}, "property"), el("th", {}, "type"), el("th", {}, "description")), rows)
        : el("p", { class: "muted" }, `type ${schema.type || "any"}, no named properties`),
      extra,
      el("details", {}, el("summary", { class: "muted" }, "raw JSON Schema"), el("pre", {}, json(schema))));
  }
  function list(items) { return items && items.length ? el("ul", {}, items.map((x) => el("li", {}, x))) : el("span", { class: "muted" }, "—"); }
  function auditTable(records, withAction) {
    if (!records.length) return el("p", { class: "muted", id: "audit-empty" }, "No audit records.");
    return el("table", { id: "audit-table" },
      el("tr", {}, ["seq", "time", "kind", "actor", withAction ? "capability" : null, "version", "outcome", "detail", "took"].filter(Boolean).map((h) => el("th", {}, h))),
      records.map((r) => el("tr", { "data-seq": r.seq },
        el("td", { class: "num" }, r.seq), el("td", { class: "time" }, fmtTime(r.time)), el("td", {}, r.kind), el("td", {}, r.actor || "—"),
        withAction ? el("td", {}, r.action ? el("a", { href: "#/cap/" + encodeURIComponent(r.action) }, r.action) : "—") : null,
        el("td", { class: "num" }, r.version || "—"),
        el("td", {}, badge(r.decision || "—", /succeeded|created|updated|allowed/.test(r.decision) ? "green" : /denied|failed|timed_out|deleted/.test(r.decision) ? "red" : "")),
        el("td", {}, r.detail || ""), el("td", { class: "num" }, fmtUS(r.duration_us)))));
  }
  async function pageCapability(id) {
    let d;
    try {
      d = await api("GET", "/v1/capabilities/" + encodeURIComponent(id));
    } catch (e) {
      page(el("h1", {}, id), showError(e), el("p", {}, el("a", { href: "#/registry" }, "Back to the registry")));
      return;
    }
    const facts = [
      ["type", d.resource_type + (d.capability_type ? " · " + d.capability_type : "")], ["version", d.version],
      ["status", statusBadge(d.status)], ["availability", [availBadge(d.availability), d.availability_reasons ? " " + d.availability_reasons.join("; ") : ""]],
      ["side effect", d.side_effect || "—"], ["risk", d.risk_level || "—"], ["needs confirmation", d.requires_confirmation ? "yes" : "no"],
      ["timeout", d.timeout || "—"], ["network", d.network_policy || "—"], ["owner", d.owner || "—"],
      ["schema digest", el("code", {}, d.schema_digest || "—")],
    ];
    const body = [
      el("h1", {}, d.title, " ", el("code", { class: "muted" }, d.resource_id)),
      d.summary ? el("p", {}, d.summary) : null,
      el("div", { class: "card" }, el("dl", { class: "kv", id: "facts" }, facts.map(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]))),
    ];
    if (d.when_to_use || d.when_not_to_use) {
      body.push(el("div", { class: "cols" },
        el("div", { class: "card" }, el("h3", {}, "When to use"), list(d.when_to_use)),
        el("div", { class: "card" }, el("h3", {}, "When not to use"), list(d.when_not_to_use))));
    }
    if (d.resource_type === "action") {
      body.push(el("div", { class: "card", id: "contract" },
        el("h2", {}, "Arguments"), schemaView(d.arguments_schema),
        el("h2", {}, "Output"), schemaView(d.output_schema),
        d.examples ? [el("h2", {}, "Examples"), d.examples.map((x) => [el("h3", {}, x.title), el("pre", {}, json(x.arguments))])] : null));
    }
    if (d.steps) {
      body.push(el("div", { class: "card" }, el("h2", {}, "Steps"), el("ol", {}, d.steps.map((s) =>
        el("li", {}, el("b", {}, s.title), s.command ? el("pre", {}, s.command) : null, s.action ? el("div", {}, "runs ", el("a", { href: "#/cap/" + encodeURIComponent(s.action) }, s.action)) : null, s.note ? el("div", { class: "muted" }, s.note) : null)))));
    }
    if (d.guidance || d.children) {
      body.push(el("div", { class: "card" }, el("h2", {}, "Pack"), d.guidance ? el("p", {}, d.guidance) : null,
        d.children ? el("ul", {}, d.children.map((c) => el("li", {}, el("a", { href: "#/cap/" + encodeURIComponent(c.resource_id) }, c.resource_id), " — ", c.title))) : null));
    }
    const versions = el("div", { class: "card", id: "versions" }, el("h2", {}, "Versions"), el("p", { class: "muted" }, "Loading…"));
    const audit = el("div", { class: "card", id: "cap-audit" }, el("h2", {}, "Audit records"), el("p", { class: "muted" }, "Loading…"));
    body.push(versions, audit);
    page(body);
    loadVersions(id, versions).catch((e) => versions.replaceChildren(el("h2", {}, "Versions"), showError(e)));
    api("GET", "/v1/console/audit?n=2000&capability=" + encodeURIComponent(id))
      .then((a) => audit.replaceChildren(el("h2", {}, "Audit records"), el("p", { class: "muted" }, `Among the last ${a.scanned} records of the chain.`), auditTable(a.records, false)))
      .catch((e) => audit.replaceChildren(el("h2", {}, "Audit records"), showError(e)));
  }
  async function loadVersions(id, box) {
    const v = await api("GET", `/v1/console/capabilities/${encodeURIComponent(id)}/versions`);
    const opts = (sel) => v.versions.map((x) => el("option", { value: x.version, selected: x.version === sel ? true : null }, "v" + x.version));
    const a = el("select", { id: "diff-a" }, opts(v.versions.length > 1 ? v.versions[1].version : v.active));
    const b = el("select", { id: "diff-b" }, opts(v.active));
    const out = el("div", { id: "diff" });
    const show = async () => {
      out.replaceChildren(el("p", { class: "muted" }, "Loading…"));
      try {
        const d = await api("GET", `/v1/console/capabilities/${encodeURIComponent(id)}/diff?a=${a.value}&b=${b.value}`);
        const changed = d.lines.filter((l) => l.op !== " ").length;
        out.replaceChildren(el("p", { class: "muted" }, `v${d.a} → v${d.b}: ${changed ? changed + " lines differ" : "identical"}`),
          el("pre", { class: "diff" }, withContext(d.lines, 3)));
      } catch (e) { out.replaceChildren(showError(e)); }
    };
    box.replaceChildren(el("h2", {}, "Versions"),
      el("table", {}, el("tr", {}, el("th", {}, "version"), el("th", {}, "title"), el("th", {}, "status"), el("th", {}, "digest")),
        v.versions.map((x) => el("tr", {}, el("td", {}, "v" + x.version, x.version === v.active ? " (active)" : ""), el("td", {}, x.title), el("td", {}, x.status || ""), el("td", {}, el("code", {}, x.digest))))),
      el("div", { class: "row" }, el("div", {}, el("label", { for: "diff-a" }, "from"), a), el("div", {}, el("label", { for: "diff-b" }, "to"), b),
        el("div", {}, el("button", { id: "diff-go", type: "button", on: { click: show } }, "Compare"))),
      out);
  }

  // withContext shows the changed lines of a diff and n lines around each; the rest folds
  // into a "… k unchanged lines" marker.
  function withContext(lines, n) {
    const keep = lines.map(() => false);
    lines.forEach((l, i) => {
      if (l.op === " ") return;
      for (let j = Math.max(0, i - n); j <= Math.min(lines.length - 1, i + n); j++) keep[j] = true;
    });
    const out = [];
    for (let i = 0; i < lines.length;) {
      if (keep[i]) {
        const l = lines[i++];
        out.push(el("span", { class: "l " + (l.op === "+" ? "add" : l.op === "-" ? "del" : "") }, l.op + " " + l.text));
        continue;
      }
      let j = i;
      while (j < lines.length && !keep[j]) j++;
      out.push(el("span", { class: "skip" }, `  … ${j - i} unchanged line${j - i === 1 ? "" : "s"}`));
      i = j;
    }
    return out;
  }
  // lineDiff marks, by longest common subsequence, the lines of a missing from b (del) and
  // the lines of b missing from a (add).
  function lineDiff(a, b) {
    const w = b.length + 1, t = new Int32Array((a.length + 1) * w);
    for (let i = a.length - 1; i >= 0; i--) for (let j = b.length - 1; j >= 0; j--) {
      t[i * w + j] = a[i] === b[j] ? t[(i + 1) * w + j + 1] + 1 : Math.max(t[(i + 1) * w + j], t[i * w + j + 1]);
    }
    const del = a.map(() => false), ins = b.map(() => false);
    let i = 0, j = 0;
    while (i < a.length || j < b.length) {
      if (i < a.length && j < b.length && a[i] === b[j]) { i++; j++; }
      else if (j < b.length && (i === a.length || t[i * w + j + 1] >= t[(i + 1) * w + j])) ins[j++] = true;
      else del[i++] = true;
    }
    return { del, ins };
  }
  function marked(lines, flags, cls) {
    return el("pre", {}, lines.map((l, i) => el("span", { class: flags[i] ? cls : "l" }, l)));
  }

  // ---- Search playground ----
  function pageSearch() {
    const f = {
      query: el("input", { id: "q", class: "wide", placeholder: "what the model asked for, e.g. restart the codex app server" }),
      within: el("input", { id: "within", placeholder: "pack id" }),
      sem: el("select", { id: "side-effect-max" }, ["", "R", "W-local", "W-shared", "I"].map((x) => el("option", { value: x }, x || "any"))),
      limit: el("input", { id: "limit", type: "number", min: 1, max: 10, value: 5 }),
      types: ["pack", "action", "recipe"].map((t) => el("input", { type: "checkbox", value: t, id: "type-" + t })),
    };
    const asFields = me.admin ? {
      tenant: el("input", { id: "as-tenant", placeholder: "default" }),
      user: el("input", { id: "as-user", placeholder: "leave empty: yourself" }),
      scopes: el("input", { id: "as-scopes", placeholder: "dev, ops" }),
    } : null;
    const out = el("div", { id: "search-out" });
    const form = el("form", { class: "card", id: "search-form", on: { submit: (ev) => { ev.preventDefault(); runSearch(f, asFields, out); } } },
      el("label", { for: "q" }, "Query"), f.query,
      el("div", { class: "row" },
        el("div", {}, el("label", { for: "within" }, "within"), f.within),
        el("div", { class: "checks" }, el("label", {}, "types"), f.types.map((c) => el("label", {}, c, " " + c.value))),
        el("div", {}, el("label", { for: "side-effect-max" }, "side_effect_max"), f.sem),
        el("div", {}, el("label", { for: "limit" }, "limit"), f.limit)),
      asFields ? el("div", { class: "row", id: "act-as" },
        el("div", {}, el("label", { for: "as-user" }, "act as user"), asFields.user),
        el("div", {}, el("label", { for: "as-tenant" }, "tenant"), asFields.tenant),
        el("div", {}, el("label", { for: "as-scopes" }, "scopes"), asFields.scopes)) : null,
      el("div", { class: "actions" }, el("button", { type: "submit", id: "search-go" }, "Search")));
    page(el("h1", {}, "Search playground"), form, out);
    f.query.focus();
  }
  async function runSearch(f, asFields, out) {
    const req = { query: f.query.value, explain: true, limit: Number(f.limit.value) || 0 };
    if (f.within.value.trim()) req.within = f.within.value.trim();
    const types = f.types.filter((c) => c.checked).map((c) => c.value);
    if (types.length) req.types = types;
    if (f.sem.value) req.side_effect_max = f.sem.value;
    const body = { request: req };
    if (asFields && asFields.user.value.trim()) {
      body.act_as = {
        user: asFields.user.value.trim(), tenant: asFields.tenant.value.trim(),
        scopes: asFields.scopes.value.split(",").map((s) => s.trim()).filter(Boolean),
      };
    }
    out.replaceChildren(el("p", { class: "muted" }, "Searching…"));
    const events = [];
    try {
      const resp = await call("POST", "/v1/console/search", body, "text/event-stream");
      if (!resp.ok) {
        const t = await resp.text();
        let e = {};
        try { e = JSON.parse(t).error || {}; } catch (x) { e = { message: t }; }
        throw new APIError(resp.status, e.code, e.message);
      }
      const reader = resp.body.getReader();
      const dec = new TextDecoder();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (value) buf += dec.decode(value, { stream: true });
        let i;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          const chunk = buf.slice(0, i);
          buf = buf.slice(i + 2);
          let ev = "message", data = "";
          for (const line of chunk.split("\n")) {
            if (line.startsWith("event: ")) ev = line.slice(7);
            else if (line.startsWith("data: ")) data += line.slice(6);
          }
          events.push({ event: ev, ...JSON.parse(data) });
        }
        if (done) break;
      }
    } catch (e) {
      out.replaceChildren(showError(e));
      return;
    }
    const final = events.find((e) => e.event === "final");
    if (!final) { out.replaceChildren(note("The stream ended without a final answer.", "bad")); return; }
    out.replaceChildren(renderAnswer(final.response, events, body.act_as));
  }
  function modelView(resp) {
    const r = JSON.parse(JSON.stringify(resp));
    for (const m of r.matches) delete m.explain;
    return r;
  }
  function why(resp) {
    const ms = resp.matches;
    const top = ms[0], next = ms[1];
    switch (resp.resolution) {
      case "confident":
        return `Confident: ${top.resource_id} scored ${fmtNum(top.score)}` + (next ? `, ${fmtNum(top.score - next.score)} above the next (${next.resource_id}).` : ", and nothing else came close.");
      case "ambiguous":
        return "Ambiguous: " + (next ? `the top candidates are close (${fmtNum(top.score)} vs ${fmtNum(next.score)}), or the request names an area rather than one capability.` : "the best candidate is a pack or the request is vague.") +
          (resp.missing_information && resp.missing_information.length ? " What would tell them apart: " + resp.missing_information.join("; ") + "." : "");
      default: {
        const reasons = {
          no_match: "no candidate scored high enough, or the best one speaks to too little of the request",
          unavailable: "candidates matched but none can be used by this caller now",
          incompatible: "the best candidate does not fit this environment",
          policy_hidden: "the capability asked for exists but the request's filters or the environment hide it",
        };
        return "No confident match: " + (reasons[resp.reason] || resp.reason || "no candidate") + ".";
      }
    }
  }
  function renderAnswer(resp, events, actAs) {
    const meta = resp.search_meta;
    const resColor = resp.resolution === "confident" ? "good" : resp.resolution === "ambiguous" ? "warn" : "bad";
    return el("div", {},
      el("div", { class: "note " + resColor, id: "resolution" }, el("b", {}, resp.resolution), resp.reason ? ` (${resp.reason})` : "", " — ", why(resp),
        actAs ? el("div", { class: "muted" }, `searched as ${actAs.user}@${actAs.tenant || "default"} [${actAs.scopes.join(", ")}]`) : null),
      el("div", { class: "stats" }, stat(meta.candidate_count, "candidates"), stat(meta.returned_count, "returned"),
        stat((meta.took_us / 1000).toFixed(2) + " ms", "took"), stat(meta.partial ? "yes" : "no", "partial"), stat(events.length - 1, "partial answers")),
      el("div", { class: "card", id: "timeline" }, el("h2", {}, "Timeline"), timeline(events, meta)),
      el("div", { class: "card", id: "explain" }, el("h2", {}, "Explain"), resp.matches.length ? resp.matches.map(matchView) : el("p", { class: "muted" }, "No matches.")),
      el("div", { class: "card" }, el("h2", {}, "The answer as the model sees it"), el("pre", { id: "model-view" }, json(modelView(resp)))));
  }
  function matchView(m) {
    const x = m.explain || { evidence: [], score_breakdown: [] };
    return el("div", { class: "match", "data-id": m.resource_id },
      el("h3", {}, `#${m.rank} `, el("a", { href: "#/cap/" + encodeURIComponent(m.resource_id) }, m.resource_id), ` — ${m.title} `, badge("score " + fmtNum(m.score), "blue"), " ", availBadge(m.availability)),
      el("div", { class: "cols" },
        el("div", {}, el("h3", {}, "Evidence per retriever"),
          el("table", { class: "evidence" }, el("tr", {}, el("th", {}, "retriever"), el("th", { class: "num" }, "rank"), el("th", { class: "num" }, "raw score"), el("th", {}, "matched")),
            (x.evidence || []).map((e) => el("tr", {}, el("td", {}, e.retriever), el("td", { class: "num" }, e.rank), el("td", { class: "num" }, fmtNum(e.raw_score)), el("td", {}, (e.matched_fields || []).join(", ")))))),
        el("div", {}, el("h3", {}, "Fusion and rerank"),
          el("div", { class: "legend" }, el("span", {}, el("i", { class: "fusion" }), "fusion (weighted reciprocal rank)"), el("span", {}, el("i", { class: "rerank" }), "rerank")),
          breakdown(x.score_breakdown || []))));
  }
  function breakdown(parts) {
    if (!parts.length) return el("p", { class: "muted" }, "no breakdown");
    const W = 420, rowH = 18, lw = 150, vw = 60;
    const maxAbs = Math.max(...parts.map((p) => Math.abs(p.value)), 1e-9);
    const hasNeg = parts.some((p) => p.value < 0);
    const span = W - lw - vw;
    const zero = lw + (hasNeg ? span / 2 : 0);
    const scale = (hasNeg ? span / 2 : span) / maxAbs;
    const H = parts.length * rowH + 22, sum = parts.reduce((a, p) => a + p.value, 0);
    return svg("svg", { class: "breakdown", width: W, height: H, viewBox: `0 0 ${W} ${H}` },
      svg("text", { class: "sum", x: W - 4, y: H - 4, "text-anchor": "end" }, "= " + fmtNum(sum)),
      svg("text", { x: lw - 6, y: H - 4, "text-anchor": "end" }, "score"),
      parts.map((p, i) => {
        const y = i * rowH + 2, w = Math.abs(p.value) * scale;
        return svg("g", {},
          svg("text", { x: lw - 6, y: y + 12, "text-anchor": "end" }, p.name),
          svg("rect", { class: "bar" + (p.value < 0 ? " neg" : /^(rrf|score|mixed)\./.test(p.name) ? "" : " rerank"), x: p.value < 0 ? zero - w : zero, y: y + 2, width: Math.max(w, 1), height: rowH - 6 }),
          svg("text", { x: W - 4, y: y + 12, "text-anchor": "end" }, fmtNum(p.value)));
      }),
      svg("line", { class: "axis", x1: zero, x2: zero, y1: 0, y2: parts.length * rowH + 4 }));
  }
  function timeline(events, meta) {
    // When each retriever's answer arrived: the first event whose completed list names it.
    const seen = new Map();
    for (const e of events) {
      const m = e.response.search_meta;
      for (const r of m.completed_retrievers || []) if (!seen.has(r)) seen.set(r, { at: e.at_us, state: "ok" });
      for (const r of m.failed_retrievers || []) if (!seen.has(r)) seen.set(r, { at: e.at_us, state: "failed" });
    }
    const last = events[events.length - 1].at_us;
    for (const r of meta.timed_out_retrievers || []) if (!seen.has(r)) seen.set(r, { at: last, state: "timed out" });
    const lanes = (meta.planned_retrievers || []).slice();
    for (const r of seen.keys()) if (!lanes.includes(r)) lanes.push(r);
    const W = 760, lw = 100, rowH = 22, top = 8;
    const H = top + lanes.length * rowH + 30;
    const maxT = Math.max(last, 1);
    const x = (t) => lw + (t / maxT) * (W - lw - 70);
    const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => f * maxT);
    const chart = svg("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, id: "timeline-chart" },
      ticks.map((t) => [svg("line", { class: "tick", x1: x(t), x2: x(t), y1: top, y2: H - 22 }),
        svg("text", { x: x(t), y: H - 8, "text-anchor": "middle" }, (t / 1000).toFixed(2) + " ms")]),
      lanes.map((r, i) => {
        const y = top + i * rowH, s = seen.get(r);
        return svg("g", { "data-retriever": r },
          svg("rect", { class: "lane", x: lw, y: y + 3, width: W - lw - 70, height: rowH - 6 }),
          svg("text", { x: lw - 6, y: y + 15, "text-anchor": "end" }, r),
          s ? svg("rect", { class: s.state === "ok" ? "bar" : "late", x: lw, y: y + 6, width: Math.max(x(s.at) - lw, 2), height: rowH - 12 }) : null,
          svg("text", { x: s ? x(s.at) + 4 : lw + 4, y: y + 15 }, s ? `${(s.at / 1000).toFixed(2)} ms${s.state === "ok" ? "" : " " + s.state}` : "no answer"));
      }));
    const rows = events.map((e, i) => el("tr", {},
      el("td", { class: "num" }, i + 1), el("td", {}, e.event), el("td", { class: "num" }, (e.at_us / 1000).toFixed(2) + " ms"),
      el("td", {}, (e.response.search_meta.completed_retrievers || []).join(", ")),
      el("td", {}, e.response.resolution), el("td", {}, e.response.matches.slice(0, 3).map((m) => m.resource_id).join(", "))));
    return el("div", {}, chart,
      el("table", { id: "partials" }, el("tr", {}, el("th", { class: "num" }, "#"), el("th", {}, "event"), el("th", { class: "num" }, "at"), el("th", {}, "retrievers answered"), el("th", {}, "resolution"), el("th", {}, "top 3 then")), rows));
  }

  // ---- Quarantine ----
  async function pageQuarantine() {
    if (!me.features.quarantine) { page(el("h1", {}, "Quarantine"), notAvailable("Quarantine")); return; }
    let data;
    try { data = await api("GET", "/v1/quarantine"); } catch (e) {
      if (e.status === 404) { page(el("h1", {}, "Quarantine"), notAvailable("Quarantine")); return; }
      throw e;
    }
    const msg = el("div", { id: "quarantine-msg" });
    // Each side marks what the other lacks: removed lines on the old side, added on the new.
    const side = (t, other, label, cls) => {
      if (!t) return el("div", { class: "card" }, el("h3", {}, label), el("p", { class: "muted" }, "— (a new tool)"));
      const part = (v, w) => {
        const a = json(v === undefined ? null : v).split("\n"), b = json(w === undefined ? null : w).split("\n");
        const d = cls === "del" ? lineDiff(a, b).del : lineDiff(b, a).ins;
        return marked(a, other ? d : a.map(() => false), cls);
      };
      const o = other || {};
      return el("div", { class: "card" }, el("h3", {}, label),
        el("p", { class: other && o.description !== t.description ? "changed" : "" }, t.description || el("span", { class: "muted" }, "no description")),
        el("h3", {}, "input schema"), part(t.input_schema || {}, o.input_schema || {}),
        t.annotations || o.annotations ? [el("h3", {}, "annotations"), t.annotations ? part(t.annotations, o.annotations || {}) : el("p", { class: "muted" }, "none")] : null);
    };
    const decide = async (id, verb) => {
      try {
        const r = await api("POST", "/v1/quarantine/" + verb, { resource_id: id });
        await pageQuarantine();
        $("quarantine-msg").replaceChildren(note(`${r.resource_id}: ${r.decision}.`, "good", "decision"));
      } catch (e) { msg.replaceChildren(showError(e)); }
    };
    page(el("h1", {}, "Quarantine"),
      el("p", { class: "muted" }, "Upstream changes held back until an administrator approves them."),
      me.admin ? null : note("Approving or rejecting needs an admin key.", "", "needs-admin"), msg,
      data.items.length ? data.items.map((it) => el("div", { class: "card quarantine-item", "data-id": it.resource_id },
        el("h2", {}, el("code", {}, it.resource_id), " ", badge(it.reason, it.reason === "new" ? "blue" : "amber"), " ", (it.flags || []).map((f) => badge(f, "red"))),
        el("p", { class: "muted" }, `from upstream ${it.upstream}, detected ${fmtTime(it.detected_at)}`),
        el("div", { class: "cols" }, side(it.old, it.new, "approved (old)", "del"), side(it.new, it.old, "announced (new)", "add")),
        me.admin ? el("div", { class: "actions" },
          el("button", { class: "ok approve", type: "button", on: { click: () => decide(it.resource_id, "approve") } }, "Approve"),
          el("button", { class: "danger reject", type: "button", on: { click: () => decide(it.resource_id, "reject") } }, "Reject")) : null))
        : el("p", { id: "quarantine-empty" }, "Nothing is waiting for approval."));
  }

  // ---- Upstreams ----
  async function pageUpstreams() {
    if (!me.features.upstreams) { page(el("h1", {}, "Upstreams"), notAvailable("Upstreams")); return; }
    let data;
    try { data = await api("GET", "/v1/upstreams"); } catch (e) {
      if (e.status === 404) { page(el("h1", {}, "Upstreams"), notAvailable("Upstreams")); return; }
      throw e;
    }
    const color = { connected: "green", connecting: "amber", down: "red" };
    page(el("h1", {}, "Upstreams"),
      el("div", { class: "card" }, data.upstreams.length ? el("table", { id: "upstreams" },
        el("tr", {}, ["name", "transport", "state", "last sync", "tools", "quarantined", "error"].map((h) => el("th", {}, h))),
        data.upstreams.map((u) => el("tr", {}, el("td", {}, u.name), el("td", {}, u.transport), el("td", {}, badge(u.state, color[u.state])),
          el("td", {}, fmtTime(u.last_sync)), el("td", { class: "num" }, u.tools), el("td", { class: "num" }, u.quarantined), el("td", { class: "error" }, u.error || ""))))
        : el("p", { id: "no-upstreams" }, "No upstream servers are configured.")));
  }

  // ---- Audit ----
  function pageAudit() {
    const f = {
      actor: el("input", { id: "f-actor", placeholder: "substring" }),
      capability: el("input", { id: "f-capability", placeholder: "id or pack" }),
      outcome: el("select", { id: "f-outcome" }, ["", "created", "updated", "status_changed", "deleted", "allowed", "denied", "confirmation_required", "succeeded", "failed", "timed_out"].map((x) => el("option", { value: x }, x || "any"))),
      n: el("input", { id: "f-n", type: "number", min: 1, max: 10000, value: 500 }),
    };
    const out = el("div", { class: "card", id: "audit-out" });
    const verdict = el("div", { id: "verdict" });
    const load = async () => {
      const q = new URLSearchParams({ n: f.n.value || "500" });
      for (const k of ["actor", "capability", "outcome"]) if (f[k].value.trim()) q.set(k, f[k].value.trim());
      out.replaceChildren(el("p", { class: "muted" }, "Loading…"));
      try {
        const a = await api("GET", "/v1/console/audit?" + q);
        out.replaceChildren(el("p", { class: "muted", id: "audit-count" }, `${a.records.length} of the last ${a.scanned} records`), auditTable(a.records, true));
      } catch (e) { out.replaceChildren(showError(e)); }
    };
    const verify = async () => {
      verdict.replaceChildren(el("p", { class: "muted" }, "Verifying the chain…"));
      try {
        const v = await api("POST", "/v1/console/audit/verify");
        verdict.replaceChildren(v.ok ? note(`Chain intact: ${v.records} records verified in ${v.took_ms} ms.`, "good", "verify-ok")
          : note(`Chain broken after ${v.records} good records: ${v.error}`, "bad", "verify-bad"));
      } catch (e) { verdict.replaceChildren(showError(e)); }
    };
    page(el("h1", {}, "Audit"),
      el("form", { class: "card", id: "audit-form", on: { submit: (ev) => { ev.preventDefault(); load(); } } },
        el("div", { class: "row" },
          el("div", {}, el("label", { for: "f-actor" }, "actor"), f.actor),
          el("div", {}, el("label", { for: "f-capability" }, "capability"), f.capability),
          el("div", {}, el("label", { for: "f-outcome" }, "outcome"), f.outcome),
          el("div", {}, el("label", { for: "f-n" }, "scan last"), f.n),
          el("div", {}, el("button", { type: "submit", id: "audit-go" }, "Filter")),
          me.admin ? el("div", {}, el("button", { type: "button", class: "secondary", id: "verify", on: { click: verify } }, "Verify chain")) : null)),
      verdict, out);
    load();
  }

  // ---- Quality and use ----
  async function pageQuality() {
    const bucket = el("select", { id: "bucket" }, [["10s", "10 s", "30m"], ["1m", "1 min", "2h"], ["10m", "10 min", "24h"], ["1h", "1 h", "168h"]]
      .map(([v, l, s]) => el("option", { value: v, "data-span": s, selected: v === "1m" ? true : null }, l)));
    const charts = el("div", { id: "quality-charts" });
    const funnel = el("div", { class: "card", id: "funnel" }, el("h2", {}, "Funnel"), el("p", { class: "muted" }, "Loading…"));
    const load = async () => {
      const span = bucket.selectedOptions[0].dataset.span;
      try {
        const q = await api("GET", `/v1/console/quality?bucket=${bucket.value}&span=${span}`);
        charts.replaceChildren(qualityCharts(q));
      } catch (e) { charts.replaceChildren(showError(e)); }
    };
    bucket.addEventListener("change", load);
    page(el("h1", {}, "Quality and use"),
      el("div", { class: "row" }, el("div", {}, el("label", { for: "bucket" }, "interval"), bucket)), charts, funnel);
    await load();
    if (!me.features.stats) { funnel.replaceChildren(el("h2", {}, "Funnel"), notAvailable("The funnel (/v1/stats)")); return; }
    try {
      funnel.replaceChildren(el("h2", {}, "Funnel"), funnelView(await api("GET", "/v1/stats")));
    } catch (e) {
      funnel.replaceChildren(el("h2", {}, "Funnel"), e.status === 404 ? notAvailable("The funnel (/v1/stats)") : showError(e));
    }
  }
  function qualityCharts(q) {
    const t = q.total;
    const label = (iso) => { const d = new Date(iso); return d.toISOString().slice(11, q.bucket_seconds < 60 ? 19 : 16); };
    return el("div", {},
      el("div", { class: "stats", id: "quality-totals" }, stat(t.searches, "searches"), stat(pct(t.searches ? t.confident / t.searches : undefined), "confident"),
        stat(pct(t.searches ? t.ambiguous / t.searches : undefined), "ambiguous"), stat(pct(t.searches ? t.no_match / t.searches : undefined), "no match"),
        stat(t.p50_ms.toFixed(2) + " ms", "p50"), stat(t.p95_ms.toFixed(2) + " ms", "p95"), stat(pct(q.partial_rate), "partial rate")),
      el("div", { class: "card" }, el("h2", {}, "Resolutions over time"),
        el("div", { class: "legend" }, el("span", {}, el("i", { class: "conf" }), "confident"), el("span", {}, el("i", { class: "amb" }), "ambiguous"), el("span", {}, el("i", { class: "none" }), "no confident match")),
        stackedBars(q.buckets, label)),
      el("div", { class: "card" }, el("h2", {}, "Latency"),
        el("div", { class: "legend" }, el("span", {}, el("i", { class: "p50" }), "p50"), el("span", {}, el("i", { class: "p95" }), "p95")),
        lines(q.buckets, label, [["p50_ms", "p50"], ["p95_ms", "p95"]], "ms")),
      el("div", { class: "card" }, el("h2", {}, "Partial answers"),
        lines(q.buckets.map((b) => ({ ...b, rate: b.searches ? 100 * b.partial / b.searches : null })), label, [["rate", "p95"]], "%")));
  }
  const CW = 900, CH = 180, PAD = { l: 64, r: 10, t: 10, b: 24 };
  function axes(n, label, buckets, maxY, unit) {
    const ys = [0, 0.5, 1].map((f) => f * maxY);
    const step = Math.max(1, Math.ceil(n / 8));
    return [
      ys.map((v) => { const y = PAD.t + (CH - PAD.t - PAD.b) * (1 - v / maxY); return [svg("line", { class: "tick", x1: PAD.l, x2: CW - PAD.r, y1: y, y2: y }), svg("text", { x: PAD.l - 4, y: y + 4, "text-anchor": "end" }, tickLabel(v) + (unit ? " " + unit : ""))]; }),
      buckets.map((b, i) => i % step ? null : svg("text", { x: PAD.l + (i + 0.5) * (CW - PAD.l - PAD.r) / n, y: CH - 6, "text-anchor": "middle" }, label(b.start))),
    ];
  }
  function tickLabel(v) { return v === 0 ? "0" : v >= 10 ? v.toFixed(0) : v >= 1 ? v.toFixed(1) : v.toPrecision(2); }
  function stackedBars(buckets, label) {
    const n = buckets.length, maxY = Math.max(1, ...buckets.map((b) => b.searches));
    const bw = (CW - PAD.l - PAD.r) / n, h = CH - PAD.t - PAD.b;
    return svg("svg", { width: CW, height: CH, viewBox: `0 0 ${CW} ${CH}`, class: "chart", id: "resolutions-chart" }, axes(n, label, buckets, maxY, ""),
      buckets.map((b, i) => {
        let y = PAD.t + h;
        return [["confident", "conf"], ["ambiguous", "amb"], ["no_match", "none"]].map(([k, cls]) => {
          const bh = (b[k] / maxY) * h;
          y -= bh;
          return b[k] ? svg("rect", { class: cls, x: PAD.l + i * bw + 1, y, width: Math.max(bw - 2, 1), height: bh }, svg("title", {}, `${label(b.start)} ${k}: ${b[k]}`)) : null;
        });
      }));
  }
  function lines(buckets, label, series, unit) {
    const n = buckets.length;
    const vals = series.flatMap(([k]) => buckets.map((b) => b[k]).filter((v) => typeof v === "number"));
    const maxY = Math.max(unit === "%" ? 1 : 0.01, ...vals) * 1.1;
    const h = CH - PAD.t - PAD.b, bw = (CW - PAD.l - PAD.r) / n;
    return svg("svg", { width: CW, height: CH, viewBox: `0 0 ${CW} ${CH}`, class: "chart" }, axes(n, label, buckets, maxY, unit),
      series.map(([k, cls]) => {
        const pts = buckets.map((b, i) => b.searches && typeof b[k] === "number" ? [PAD.l + (i + 0.5) * bw, PAD.t + h * (1 - b[k] / maxY)] : null);
        const d = pts.reduce((acc, p, i) => p ? acc + (pts[i - 1] ? "L" : "M") + p[0].toFixed(1) + " " + p[1].toFixed(1) : acc, "");
        return [d ? svg("path", { class: cls, d }) : null, pts.map((p) => p ? svg("circle", { cx: p[0], cy: p[1], r: 3, class: cls }) : null)];
      }));
  }
  function funnelView(st) {
    const rows = (st.funnel || []).slice().sort((a, b) => b.searched - a.searched);
    const max = Math.max(1, ...rows.map((r) => r.searched));
    const W = 300, steps = ["searched", "described", "ran", "succeeded"];
    // One small funnel per capability: a bar per step, as wide as its count.
    const bars = (r) => svg("svg", { width: W, height: 36, viewBox: `0 0 ${W} 36`, class: "funnel" },
      steps.map((k, i) => svg("rect", { class: "f" + i, x: 0, y: i * 9, width: Math.max(1, W * r[k] / max), height: 7 }, svg("title", {}, `${k}: ${r[k]}`))));
    return el("div", {},
      el("div", { class: "stats" }, stat(pct(st.search_to_describe), "search → describe"), stat(pct(st.describe_to_run), "describe → run"), stat(pct(st.run_success), "runs succeeded"), stat(pct(st.clarification_rate), "clarifications")),
      el("div", { class: "legend" }, steps.map((k, i) => el("span", {}, el("i", { class: "f" + i }), k))),
      rows.length ? el("table", { id: "funnel-table" }, el("tr", {}, el("th", {}, "capability"), el("th", { class: "num" }, "searched"), el("th", { class: "num" }, "described"), el("th", { class: "num" }, "ran"), el("th", { class: "num" }, "succeeded"), el("th", {}, "")),
        rows.map((r) => el("tr", {}, el("td", {}, el("a", { href: "#/cap/" + encodeURIComponent(r.resource_id) }, r.resource_id)),
          el("td", { class: "num" }, r.searched), el("td", { class: "num" }, r.described), el("td", { class: "num" }, r.ran), el("td", { class: "num" }, r.succeeded),
          el("td", {}, bars(r))))) : el("p", { class: "muted" }, "No use recorded yet."));
  }

  // ---- start ----
  document.addEventListener("DOMContentLoaded", () => {
    $("login-form").addEventListener("submit", (ev) => {
      ev.preventDefault();
      $("login-error").textContent = "";
      signIn($("key").value.trim()).catch((e) => {
        if (!(e instanceof APIError && e.status === 401)) $("login-error").textContent = e instanceof APIError ? e.message : String(e);
      });
    });
    $("logout").addEventListener("click", () => signOut(""));
    window.addEventListener("hashchange", route);
    if (sessionStorage.getItem(KEY)) {
      signIn(sessionStorage.getItem(KEY)).catch(() => signOut(""));
    } else {
      signOut("");
    }
  });
})();
