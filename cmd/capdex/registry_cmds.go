package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/registry"
	"github.com/capdex/capdex/registry/store"
)

func cmdLint(ctx context.Context, env *cliEnv, args []string) error {
	var c common
	fs := newFlags(env, "lint", "[--json] [--max-file-bytes N] DIR")
	c.register(fs)
	maxFile := fs.Int64("max-file-bytes", registry.DefaultMaxFileBytes, "refuse a definition file larger than this")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return badInput("want one registry directory, got %d arguments", len(pos))
	}
	if *maxFile <= 0 {
		return badInput("--max-file-bytes %d: want a positive size", *maxFile)
	}
	caps, err := registry.LoadDirWith(pos[0], registry.LoadOptions{MaxFileBytes: *maxFile})
	var lerrs registry.LintErrors
	if errors.As(err, &lerrs) {
		if c.json {
			printJSON(env.stdout, map[string]any{"ok": false, "errors": lerrs})
		}
		return usageError{fmt.Errorf("%d problems:\n%w", len(lerrs), err)}
	}
	if err != nil {
		return badInput("%v", err)
	}
	warns := registry.LintWarnings(caps)
	if c.json {
		if warns == nil {
			warns = []registry.LintError{}
		}
		return printJSON(env.stdout, map[string]any{"ok": true, "capabilities": len(caps), "warnings": warns})
	}
	for _, w := range warns {
		fmt.Fprintf(env.stderr, "warning: %s\n", w.Error())
	}
	fmt.Fprintf(env.stdout, "ok: %d capabilities in %s (%d warnings)\n", len(caps), pos[0], len(warns))
	return nil
}

// Environment defaults of the imported packs' gates (the flags override them).
const (
	envImportDiscover = "CAPDEX_IMPORT_DISCOVER"
	envImportDescribe = "CAPDEX_IMPORT_DESCRIBE"
	envImportExecute  = "CAPDEX_IMPORT_EXECUTE"
)

// envOr returns $name when set, else def.
func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

func gateWords(l []string) string {
	if len(l) == 0 {
		return "nobody but admin"
	}
	return strings.Join(l, ",")
}

func cmdImport(ctx context.Context, env *cliEnv, args []string) error {
	var c common
	fs := newFlags(env, "import", "[--format auto|yaml|openai|anthropic|mcp|jsonl] [--pack P] [--source NAME] [--prune] PATH")
	c.register(fs)
	format := fs.String("format", "auto", "input format: yaml (a registry directory or file), openai, anthropic, mcp, jsonl, auto")
	pack := fs.String("pack", "imported", "pack for imported tools whose names carry no pack")
	source := fs.String("source", "", "the catalogue's name: its identity across re-imports, whatever the file is called (default: the --pack value)")
	prune := fs.Bool("prune", false, "delete the capabilities imported before from the same --source that the file no longer holds")
	discover := fs.String("discover", envOr(envImportDiscover, "*"), "ACL of the imported packs: who may discover (scopes, user:NAME, tenant:NAME, *; $"+envImportDiscover+")")
	describe := fs.String("describe", envOr(envImportDescribe, "*"), "ACL of the imported packs: who may describe ($"+envImportDescribe+")")
	execute := fs.String("execute", envOr(envImportExecute, ""), "ACL of the imported packs: who may execute; empty: nobody but admin ($"+envImportExecute+")")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return badInput("want one PATH, got %d arguments", len(pos))
	}
	path := pos[0]
	st, err := os.Stat(path)
	if err != nil {
		return badInput("%v", err)
	}
	if st.IsDir() || *format == "yaml" || strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml") {
		if *prune || *source != "" {
			return badInput("--prune and --source are for foreign catalogues; a registry directory's definitions carry their own versions")
		}
		caps, err := registry.LoadDir(path)
		if err != nil {
			return usageError{err}
		}
		e, err := env.open(ctx, &c, engine.Options{})
		if err != nil {
			return err
		}
		if err := e.Import(ctx, caps, "cli:"+localUser()); err != nil {
			return err
		}
		if c.json {
			return printJSON(env.stdout, map[string]any{"imported": len(caps), "generation": e.Generation()})
		}
		fmt.Fprintf(env.stdout, "imported %d capabilities; registry generation %d\n", len(caps), e.Generation())
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return badInput("%v", err)
	}
	defer f.Close()
	acl := registry.ACL{Discover: splitList(*discover), Describe: splitList(*describe), Execute: splitList(*execute)}
	name := *source
	if name == "" {
		name = *pack
	}
	// the source's name, not the file path, is the catalogue's identity: the same content
	// under another file name is the same definitions
	caps, err := registry.ImportWith(f, registry.ImportOptions{Format: *format, Pack: *pack, Provider: "import", Source: name, ACL: acl,
		Logger: slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	var lerrs registry.LintErrors
	if errors.As(err, &lerrs) {
		// the importer locates problems in opts.Source, the catalogue's name (the pack by
		// default); the person needs the file they gave
		for i := range lerrs {
			lerrs[i].File = path
		}
		return usageError{err}
	}
	if err != nil {
		return usageError{fmt.Errorf("%s: %w", path, err)}
	}
	e, err := env.open(ctx, &c, engine.Options{})
	if err != nil {
		return err
	}
	// A re-import keeps the gates an earlier import of the same source gave its packs,
	// unless a flag or $CAPDEX_IMPORT_* sets them: leaving --execute off the second
	// import must not revoke who may run the tools.
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for gate, env := range map[string]string{"discover": envImportDiscover, "describe": envImportDescribe, "execute": envImportExecute} {
		if _, ok := os.LookupEnv(env); ok {
			given[gate] = true
		}
	}
	if err := keepStoredGates(e, caps, name, given); err != nil {
		return err
	}
	sum, err := e.ImportRefresh(ctx, caps, name, *prune, "cli:"+localUser())
	if err != nil {
		return err
	}
	for _, w := range registry.LintWarnings(caps) {
		if w.Field != "acl.execute" { // the gates line below says it once for all
			fmt.Fprintf(env.stderr, "warning: %s\n", w.Error())
		}
	}
	for _, p := range caps {
		if p.ResourceType == registry.TypePack {
			acl = p.ACL // what the (first) pack got, stored gates kept included
			break
		}
	}
	if c.json {
		return printJSON(env.stdout, map[string]any{"source": name, "created": sum.Created, "updated": sum.Updated,
			"unchanged": sum.Unchanged, "removed": sum.Removed, "generation": e.Generation(),
			"acl": map[string][]string{"discover": acl.Discover, "describe": acl.Describe, "execute": acl.Execute}})
	}
	fmt.Fprintf(env.stdout, "imported %d capabilities from source %q: %d created, %d updated, %d unchanged, %d removed; registry generation %d\n",
		len(caps), name, len(sum.Created), len(sum.Updated), len(sum.Unchanged), len(sum.Removed), e.Generation())
	for _, line := range packGates(caps) {
		fmt.Fprintf(env.stdout, "%s (set with --discover, --describe, --execute or $%s)\n", line, envImportExecute)
	}
	return nil
}

// keepStoredGates gives each imported pack that an earlier import of the same source
// stored the stored pack's gates for every gate not in given (the flags and environment
// variables set on this command line), and a pack stored otherwise (which the import joins
// as it is) its own gates, so that the summary line says what applies.
func keepStoredGates(e *engine.Engine, caps []*registry.Capability, source string, given map[string]bool) error {
	for _, c := range caps {
		if c.ResourceType != registry.TypePack {
			continue
		}
		old, err := e.Definition(c.ID, 0)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if !old.Provenance.Imported || old.Provenance.Source != source {
			c.ACL = old.ACL // a pack of its own is joined as it is (engine.ImportRefresh)
			continue
		}
		if !given["discover"] {
			c.ACL.Discover = old.ACL.Discover
		}
		if !given["describe"] {
			c.ACL.Describe = old.ACL.Describe
		}
		if !given["execute"] {
			c.ACL.Execute = old.ACL.Execute
		}
	}
	return nil
}

// packGates says the gates the imported packs got, one line for all when they agree.
func packGates(caps []*registry.Capability) []string {
	var lines []string
	per := map[string][]string{}
	packs := map[string]bool{}
	for _, c := range caps {
		if c.ResourceType == registry.TypePack {
			packs[c.ID] = true
		}
	}
	for _, c := range caps {
		if c.ResourceType != registry.TypePack {
			continue
		}
		if i := strings.LastIndexByte(c.ID, '.'); i > 0 && packs[c.ID[:i]] && c.ACL.IsZero() {
			continue // inherits its parent's gates
		}
		l := fmt.Sprintf("discover %s, describe %s, execute %s", gateWords(c.ACL.Discover), gateWords(c.ACL.Describe), gateWords(c.ACL.Execute))
		if per[l] == nil {
			lines = append(lines, l)
		}
		per[l] = append(per[l], c.ID)
	}
	if len(lines) == 1 {
		return []string{"gates of the imported packs: " + lines[0]}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = "gates of " + strings.Join(per[l], ", ") + ": " + l
	}
	return out
}

func cmdList(ctx context.Context, env *cliEnv, args []string) error {
	var c common
	fs := newFlags(env, "list", "[--json] [PREFIX]")
	c.register(fs)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return badInput("want at most one PREFIX")
	}
	e, err := env.open(ctx, &c, engine.Options{})
	if err != nil {
		return err
	}
	prefix := ""
	if len(pos) == 1 {
		prefix = pos[0]
	}
	caps, err := e.Definitions(prefix)
	if err != nil {
		return err
	}
	if c.json {
		type row struct {
			ID      string                `json:"id"`
			Version int                   `json:"version"`
			Type    registry.ResourceType `json:"resource_type"`
			Status  registry.Status       `json:"status"`
			Title   string                `json:"title"`
		}
		rows := make([]row, 0, len(caps))
		for _, c := range caps {
			rows = append(rows, row{c.ID, c.Version, c.ResourceType, c.Status, c.Title})
		}
		return printJSON(env.stdout, rows)
	}
	tw := tabwriter.NewWriter(env.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tVERSION\tTYPE\tSTATUS\tTITLE")
	for _, c := range caps {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", c.ID, c.Version, c.ResourceType, c.Status, c.Title)
	}
	return tw.Flush()
}

func cmdShow(ctx context.Context, env *cliEnv, args []string) error {
	var c common
	fs := newFlags(env, "show", "ID[@VERSION]")
	c.register(fs)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return badInput("want one ID")
	}
	id, version, err := registry.SplitVersion(pos[0])
	if err != nil || !registry.ValidID(id) {
		return badInput("%q is not a capability id (ID or ID@VERSION)", pos[0])
	}
	e, err := env.open(ctx, &c, engine.Options{})
	if err != nil {
		return err
	}
	def, err := e.Definition(id, version)
	if errors.Is(err, registry.ErrNotFound) {
		return noSuchCapability(pos[0])
	}
	if err != nil {
		return err
	}
	return printJSON(env.stdout, def)
}

func cmdAudit(ctx context.Context, env *cliEnv, args []string) error {
	var c common
	fs := newFlags(env, "audit", "verify | tail [-n N]")
	c.register(fs)
	n := fs.Int("n", 20, "records to print with tail")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || (pos[0] != "verify" && pos[0] != "tail") {
		return badInput("want 'audit verify' or 'audit tail [-n N]'")
	}
	if pos[0] == "verify" {
		return auditVerify(env, &c)
	}
	e, err := env.open(ctx, &c, engine.Options{})
	if err != nil {
		return err
	}
	recs, err := e.AuditTail(*n)
	if err != nil {
		return err
	}
	if c.json {
		return printJSON(env.stdout, recs)
	}
	tw := tabwriter.NewWriter(env.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tTIME\tKIND\tACTOR\tACTION\tVERSION\tDECISION\tDETAIL")
	for _, r := range recs {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", r.Seq, r.Time.Format("2006-01-02T15:04:05Z07:00"), r.Kind, r.Actor, r.Action, r.Version, r.Decision, r.Detail)
	}
	return tw.Flush()
}

// auditVerify checks the audit chain of the data directory, opening the store itself: an
// engine would seed a store whose meta/gen was deleted (which the store refuses) and build
// an index verification does not need. With $CAPDEX_AUDIT_KEY_FILE the records' HMACs
// are checked too.
func auditVerify(env *cliEnv, c *common) error {
	dir, err := dataDir(c.home)
	if err != nil {
		return err
	}
	var key []byte
	if f := os.Getenv("CAPDEX_AUDIT_KEY_FILE"); f != "" {
		if key, err = store.ReadAuditKey(f, dir); err != nil {
			return usageError{err}
		}
	}
	st, err := store.Open(store.Options{Dir: dir, AuditKey: key, Logger: c.logger(env)})
	if err != nil {
		return err
	}
	defer st.Close()
	count, verr := st.VerifyAudit()
	keyed := "no audit key given (CAPDEX_AUDIT_KEY_FILE): the hash chain is checked, not the records' HMACs"
	if key != nil {
		keyed = "each record's HMAC checked against the audit key"
	}
	if c.json {
		out := map[string]any{"ok": verr == nil, "records": count, "keyed": key != nil}
		if verr != nil {
			out["error"] = verr.Error()
		}
		printJSON(env.stdout, out)
	} else if verr == nil {
		fmt.Fprintf(env.stdout, "ok: audit chain of %d records verified; %s\n", count, keyed)
	}
	return verr
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}
