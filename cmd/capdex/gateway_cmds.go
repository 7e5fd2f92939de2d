package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/engine/server"
	"github.com/capdex/capdex/registry"
)

// Environment of the commands that talk to a running daemon.
const (
	envURL = "CAPDEX_URL"
	envKey = "CAPDEX_API_KEY"
)

// daemonClient is how upstreams and quarantine reach a running daemon.
type daemonClient struct {
	url, key string
}

func (d *daemonClient) register(fs interface {
	StringVar(*string, string, string, string)
}) {
	fs.StringVar(&d.url, "url", "", "daemon URL (default $"+envURL+", else http://"+server.DefaultAddr+")")
	fs.StringVar(&d.key, "key", "", "API key (default $"+envKey+", else the admin key in the data directory)")
}

func (d *daemonClient) resolve() error {
	if d.url == "" {
		d.url = os.Getenv(envURL)
	}
	if d.url == "" {
		d.url = "http://" + server.DefaultAddr
	}
	d.url = strings.TrimSuffix(d.url, "/")
	if d.key == "" {
		d.key = os.Getenv(envKey)
	}
	if d.key == "" {
		dir, err := dataDir("")
		if err != nil {
			return err
		}
		b, err := os.ReadFile(filepath.Join(dir, server.AdminKeyFile))
		if err != nil {
			return badInput("no API key: pass --key or set $%s (%v)", envKey, err)
		}
		d.key = strings.TrimSpace(string(b))
	}
	return nil
}

// call sends one request and decodes a 200 answer into out; any other status is an error
// carrying the daemon's message.
func (d *daemonClient) call(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, d.url+path, rd)
	if err != nil {
		return badInput("--url %q: %v", d.url, err)
	}
	req.Header.Set("Authorization", "Bearer "+d.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return fmt.Errorf("reaching the daemon at %s (is capdex serve running?): %w", d.url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var e server.ErrorBody
		if json.Unmarshal(b, &e) == nil && e.Error.Message != "" {
			return fmt.Errorf("%s %s: %d %s: %s", method, path, resp.StatusCode, e.Error.Code, e.Error.Message)
		}
		return fmt.Errorf("%s %s: %d", method, path, resp.StatusCode)
	}
	return json.Unmarshal(b, out)
}

func cmdUpstreams(ctx context.Context, env *cliEnv, args []string) error {
	var d daemonClient
	var asJSON bool
	fs := newFlags(env, "upstreams", "[--url URL] [--key KEY] [--json]")
	d.register(fs)
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return badInput("upstreams takes no arguments, got %q", pos)
	}
	if err := d.resolve(); err != nil {
		return err
	}
	var l server.UpstreamList
	if err := d.call(ctx, "GET", "/v1/upstreams", nil, &l); err != nil {
		return err
	}
	if asJSON {
		return printJSON(env.stdout, l)
	}
	tw := tabwriter.NewWriter(env.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTRANSPORT\tSTATE\tTOOLS\tQUARANTINED\tLAST SYNC\tERROR")
	for _, u := range l.Upstreams {
		sync := "never"
		if u.LastSync != nil {
			sync = u.LastSync.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\n", u.Name, u.Transport, u.State, u.Tools, u.Quarantined, sync, u.Error)
	}
	return tw.Flush()
}

func cmdQuarantine(ctx context.Context, env *cliEnv, args []string) error {
	var d daemonClient
	var asJSON bool
	fs := newFlags(env, "quarantine", "[list | approve ID | reject ID] [--url URL] [--key KEY] [--json]")
	d.register(fs)
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	verb := "list"
	if len(pos) > 0 {
		verb = pos[0]
	}
	switch {
	case verb == "list" && len(pos) <= 1:
	case (verb == "approve" || verb == "reject") && len(pos) == 2:
	default:
		return badInput("want list, approve ID or reject ID, got %q", pos)
	}
	if err := d.resolve(); err != nil {
		return err
	}
	if verb != "list" {
		var res struct {
			ResourceID string `json:"resource_id"`
			Decision   string `json:"decision"`
		}
		if err := d.call(ctx, "POST", "/v1/quarantine/"+verb, server.QuarantineDecision{ResourceID: pos[1]}, &res); err != nil {
			return err
		}
		if asJSON {
			return printJSON(env.stdout, res)
		}
		fmt.Fprintf(env.stdout, "%s %s\n", res.ResourceID, res.Decision)
		return nil
	}
	var l struct {
		Items []server.QuarantineItem `json:"items"`
	}
	if err := d.call(ctx, "GET", "/v1/quarantine", nil, &l); err != nil {
		return err
	}
	if asJSON {
		return printJSON(env.stdout, l)
	}
	if len(l.Items) == 0 {
		fmt.Fprintln(env.stdout, "nothing in quarantine")
	}
	for _, it := range l.Items {
		fmt.Fprintf(env.stdout, "%s  (%s tool of %s, %s)\n", it.ResourceID, it.Reason, it.Upstream, it.DetectedAt.Format(time.RFC3339))
		if it.New == nil {
			continue
		}
		if it.Old != nil && it.Old.Description != it.New.Description {
			fmt.Fprintf(env.stdout, "  - description: %s\n", it.Old.Description)
		}
		fmt.Fprintf(env.stdout, "  + description: %s\n", it.New.Description)
		if it.Old != nil && string(it.Old.InputSchema) != string(it.New.InputSchema) {
			fmt.Fprintf(env.stdout, "  - input_schema: %s\n  + input_schema: %s\n", it.Old.InputSchema, it.New.InputSchema)
		}
		if it.Old != nil && string(it.Old.Annotations) != string(it.New.Annotations) {
			fmt.Fprintf(env.stdout, "  - annotations: %s\n  + annotations: %s\n", it.Old.Annotations, it.New.Annotations)
		}
		for _, f := range it.Flags {
			fmt.Fprintf(env.stdout, "  ! %s\n", f)
		}
	}
	return nil
}

func cmdDelete(ctx context.Context, env *cliEnv, args []string) error {
	var c common
	fs := newFlags(env, "delete", "[--recursive] ID")
	c.register(fs)
	recursive := fs.Bool("recursive", false, "also delete everything under the pack ID (all or nothing)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return badInput("want one ID, got %d arguments", len(pos))
	}
	e, err := env.open(ctx, &c, engine.Options{})
	if err != nil {
		return err
	}
	actor := "cli:" + localUser()
	ids := []string{pos[0]}
	if *recursive {
		ids, err = e.DeleteTree(ctx, pos[0], actor)
	} else {
		err = e.Delete(ctx, pos[0], actor)
	}
	if err != nil {
		if errors.Is(err, registry.ErrNotFound) {
			return noSuchCapability(pos[0])
		}
		if isEngineBadInput(err) && !*recursive {
			return usageError{fmt.Errorf("%w (use --recursive to delete a pack with everything under it)", err)}
		}
		return err
	}
	if c.json {
		return printJSON(env.stdout, map[string]any{"deleted": ids, "generation": e.Generation()})
	}
	fmt.Fprintf(env.stdout, "deleted %d capabilities; registry generation %d\n", len(ids), e.Generation())
	return nil
}
