package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/capdex/capdex/engine"
)

// embedderUsage is the help of every --embedder flag.
const embedderUsage = "semantic embedder: hashed (offline default), model2vec:DIR, openai:MODEL@URL or ollama:MODEL@URL (API key from $CAPDEX_EMBEDDER_API_KEY)"

// embedderEnvKey is the environment variable an endpoint's API key is read from when the
// embedder comes from the --embedder flag.
const embedderEnvKey = "CAPDEX_EMBEDDER_API_KEY"

// registerEmbedder adds --embedder to fs.
func registerEmbedder(fs *flag.FlagSet) *string {
	return fs.String("embedder", "", embedderUsage)
}

// flagSpec parses an --embedder value; ok is false when the flag was not given.
func flagSpec(v string) (spec engine.EmbedderSpec, ok bool, err error) {
	if v == "" {
		return spec, false, nil
	}
	spec, err = engine.ParseEmbedder(v)
	if err != nil {
		return spec, false, badInput("--embedder: %v", err)
	}
	if (spec.Kind == "openai" || spec.Kind == "ollama") && os.Getenv(embedderEnvKey) != "" {
		spec.APIKeyEnv = embedderEnvKey
	}
	return spec, true, nil
}

// applyEmbedder sets the embedder of eo from an --embedder value (nothing when empty) and
// a progress bar for the first embedding of the catalogue, drawn on stderr when it is a
// terminal or when verbose.
func applyEmbedder(env *cliEnv, eo *engine.Options, flagValue string, verbose bool) error {
	spec, ok, err := flagSpec(flagValue)
	if err != nil || !ok {
		return err
	}
	emb, err := engine.OpenEmbedder(spec)
	if err != nil {
		return badInput("--embedder: %v", err)
	}
	eo.Embedder = emb
	eo.EmbedProgress = embedProgress(env.stderr, verbose)
	return nil
}

// embedProgress returns an Options.EmbedProgress that draws a bar on w when w is a terminal
// (redrawn in place) or when verbose (a line per quarter), nil otherwise.
func embedProgress(w io.Writer, verbose bool) func(done, total int) {
	tty := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	if !tty && !verbose {
		return nil
	}
	var mu sync.Mutex
	start, quarter, ended := time.Now(), 0, false
	return func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		total = max(total, done, 1)
		if ended && done == total {
			return // the end of this build is drawn already
		}
		if ended { // a later build (a registry reload)
			start, quarter = time.Now(), 0
		}
		ended = done == total
		const width = 30
		n := done * width / total
		switch {
		case tty:
			fmt.Fprintf(w, "\rembedding capabilities [%s%s] %d/%d", strings.Repeat("#", n), strings.Repeat(".", width-n), done, total)
			if done == total {
				fmt.Fprintln(w)
			}
		case 4*done/total > quarter || done == total:
			quarter = 4 * done / total
			fmt.Fprintf(w, "embedding capabilities: %d/%d (%.1fs)\n", done, total, time.Since(start).Seconds())
		}
	}
}
