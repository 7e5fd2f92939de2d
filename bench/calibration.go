package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/engine/rank"
	"github.com/capdex/capdex/registry"
)

// CalibrationBins is the number of equal-width confidence bins of the reliability table.
const CalibrationBins = 10

// Calibration says whether a search's confidence means what it says: how many answers are
// confident, how often a confident top answer is right, how many right top answers were
// not marked confident, and a reliability table (confidence bins against the observed share
// of right top answers) with its expected calibration error.
type Calibration struct {
	Answers int `json:"answers"`
	// Confident is the share of answers resolved confident.
	Confident *float64 `json:"confident"`
	// NoMatch is the share resolved no_confident_match.
	NoMatch *float64 `json:"no_match"`
	// PrecisionConfident is precision@1 among confident answers.
	PrecisionConfident *float64 `json:"precision@1_confident"`
	// RightNotConfident is the share of right top answers not resolved confident.
	RightNotConfident *float64 `json:"right_not_confident"`
	// ECE is the expected calibration error: the answer-weighted mean, over the bins, of
	// |mean confidence − share right|.
	ECE        *float64         `json:"ece"`
	Bins       []ReliabilityBin `json:"reliability"`
	confident  mean
	noMatch    mean
	precision  mean
	rightNotOK mean
	bins       [CalibrationBins]struct{ n, conf, right float64 }
}

// ReliabilityBin is one row of the reliability table: answers whose confidence lies in
// [Lo, Hi).
type ReliabilityBin struct {
	Lo       float64 `json:"lo"`
	Hi       float64 `json:"hi"`
	Answers  int     `json:"answers"`
	MeanConf float64 `json:"mean_confidence"`
	Right    float64 `json:"share_right"`
}

// add records one answer: its confidence, resolution, and whether its top answer is right.
func (c *Calibration) add(conf float64, res registry.Resolution, right bool) {
	c.Answers++
	c.confident.addBool(res == registry.Confident)
	c.noMatch.addBool(res == registry.NoConfidentMatch)
	if res == registry.Confident {
		c.precision.addBool(right)
	}
	if right {
		c.rightNotOK.addBool(res != registry.Confident)
	}
	b := min(int(conf*CalibrationBins), CalibrationBins-1)
	c.bins[max(b, 0)].n++
	c.bins[max(b, 0)].conf += conf
	if right {
		c.bins[max(b, 0)].right++
	}
}

// finish fills the exported figures.
func (c *Calibration) finish() *Calibration {
	c.Confident, c.NoMatch = c.confident.value(), c.noMatch.value()
	c.PrecisionConfident, c.RightNotConfident = c.precision.value(), c.rightNotOK.value()
	c.Bins = c.Bins[:0]
	ece := 0.0
	for i, b := range c.bins {
		if b.n == 0 {
			continue
		}
		row := ReliabilityBin{Lo: float64(i) / CalibrationBins, Hi: float64(i+1) / CalibrationBins, Answers: int(b.n),
			MeanConf: round6(b.conf / b.n), Right: round6(b.right / b.n)}
		c.Bins = append(c.Bins, row)
		ece += b.n * math.Abs(b.conf/b.n-b.right/b.n)
	}
	if c.Answers > 0 {
		v := round6(ece / float64(c.Answers))
		c.ECE = &v
	}
	return c
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// LabelledSet is one source of labelled searches for FitConfidence: a catalogue and its
// queries (EvalTools' format), cases on a registry (EvalCases'), or requests the registry
// cannot serve (Negatives: every answer's top is wrong).
type LabelledSet struct {
	// Name labels the set in the leave-one-set-out report.
	Name string
	// Tools is a flat catalogue (../shared/eval format); empty means the built-in registry
	// (or Registry).
	Tools string
	// Registry is a registry directory used instead of the built-in registry.
	Registry string
	Queries  []LabelledQuery
	Cases    []Case
	// Weight is the set's weight against the others (0 counts as 1).
	Weight float64
}

// labelledSearch is one search of a set: its features, labels and answer.
type labelledSearch struct {
	l          rank.Labelled
	has        bool
	resolution registry.Resolution
}

// collect runs every query or case of the set and labels it.
func (s *LabelledSet) collect(ctx context.Context) ([]labelledSearch, error) {
	// Every retriever gets QualityDeadlines: a search answered partial because the machine
	// was loaded would change the features, and so the fitted model.
	eo := engine.Options{NoSync: true, Deadlines: QualityDeadlines()}
	if s.Tools != "" {
		f, err := os.Open(s.Tools)
		if err != nil {
			return nil, err
		}
		caps, err := registry.ImportWith(f, registry.ImportOptions{Format: "jsonl", Pack: "tools", Provider: "eval"})
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Tools, err)
		}
		eo.Seed = caps
	} else if s.Registry != "" {
		eo.SeedDirs = []string{s.Registry}
	}
	e, err := engine.Open(ctx, eo)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	label := labeller(e.Snapshot())
	var out []labelledSearch
	run := func(req registry.SearchRequest, rc registry.RuntimeContext, want []string, wantRes registry.Resolution) error {
		resp, sm, err := e.CalibrationSample(ctx, req, rc, wantRes)
		if err != nil {
			if errors.Is(err, engine.ErrInvalidRequest) {
				return nil
			}
			return err
		}
		ls := labelledSearch{has: sm.HasFeatures, resolution: resp.Resolution}
		ls.l.Features = sm.Features
		for i, m := range resp.Matches {
			if i >= 5 {
				break
			}
			if slices.Contains(want, label(m.ResourceID)) {
				ls.l.Found = true
				ls.l.Correct = ls.l.Correct || i == 0
			}
		}
		// A case that expects a question or no match has no right top answer to be sure of.
		if wantRes == registry.Ambiguous || wantRes == registry.NoConfidentMatch {
			ls.l.Correct = false
		}
		switch wantRes {
		case registry.NoConfidentMatch:
			ls.l.Found = false
		case registry.Ambiguous:
			// the registry serves it by asking: a question among its matches, not a refusal
			ls.l.Found = true
		}
		out = append(out, ls)
		return nil
	}
	admin := registry.RuntimeContext{Tenant: "default", User: "eval", Scopes: []string{"*", "admin"}}
	for _, q := range s.Queries {
		if err := run(registry.SearchRequest{Query: q.Query, Limit: 10}, admin, q.Relevant, ""); err != nil {
			return nil, fmt.Errorf("%s: query %s: %w", s.Name, q.QID, err)
		}
	}
	for i, c := range s.Cases {
		req := registry.SearchRequest{Query: c.Query, Within: c.Within, SideEffectMax: c.SideEffectMax, Types: c.Types, Limit: 10}
		if err := run(req, c.RuntimeContext, c.ExpectedTopActions, c.ExpectedResolution); err != nil {
			return nil, fmt.Errorf("%s: case %d (%s): %w", s.Name, i+1, c.Name, err)
		}
	}
	return out, nil
}

// FitReport is what FitConfidence learned: the model fitted on every set, and per set the
// calibration of a model fitted without it (leave one set out) and of the full model.
type FitReport struct {
	Model *rank.Model `json:"model"`
	// PerSet holds, per set name, the held-out and in-sample calibration.
	PerSet map[string]SetFit `json:"per_set"`
}

// SetFit is one set's calibration under the held-out model and the full one.
type SetFit struct {
	Searches int          `json:"searches"`
	HeldOut  *Calibration `json:"held_out"`
	// HalfOut is two-fold cross-validation inside the set: each half (the searches at even
	// and at odd positions) scored by a model fitted on the other sets and the other half.
	// Where a set is the only one of its kind (the seed cases, the only right answers on a
	// curated registry), leaving it out leaves its regime unlearnt; this says how the fit
	// generalises to unseen searches of a kind it has seen.
	HalfOut *Calibration `json:"half_out"`
	All     *Calibration `json:"all"`
}

// FitConfidence runs every set, labels its searches and fits rank.Fit on all of them, each
// set weighing as much as any other whatever its size (times its Weight) (a set of 10,000 queries does not
// drown 150 negatives). It also fits, per set, a model on the other sets and reports that
// model's calibration on the set left out.
// With dump set, every labelled search is written to it as a JSON line (set, features,
// labels), for study.
func FitConfidence(ctx context.Context, sets []LabelledSet, o rank.FitOptions, dump io.Writer) (*FitReport, error) {
	per := make([][]labelledSearch, len(sets))
	for i := range sets {
		ls, err := sets[i].collect(ctx)
		if err != nil {
			return nil, err
		}
		per[i] = ls
		if dump != nil {
			for _, s := range ls {
				writeLine(dump, struct {
					Set      string                    `json:"set"`
					Features [rank.NumFeatures]float64 `json:"features"`
					Has      bool                      `json:"has"`
					Correct  bool                      `json:"correct"`
					Found    bool                      `json:"found"`
				}{sets[i].Name, s.l.Features, s.has, s.l.Correct, s.l.Found})
			}
		}
	}
	// fit fits on every set but skip, and of set skip on the half at positions of parity
	// half (0 or 1) when half ≥ 0.
	fit := func(skip, half int) (*rank.Model, error) {
		var samples []rank.Labelled
		for i, ls := range per {
			if i == skip {
				if half < 0 {
					continue
				}
				ls = halfOf(ls, half)
			}
			if len(ls) == 0 {
				continue
			}
			w := 1000 / float64(len(ls))
			if sets[i].Weight > 0 {
				w *= sets[i].Weight
			}
			for _, s := range ls {
				if s.has {
					l := s.l
					l.Weight = w
					samples = append(samples, l)
				}
			}
		}
		return rank.Fit(samples, o)
	}
	full, err := fit(-1, -1)
	if err != nil {
		return nil, err
	}
	rep := &FitReport{Model: full, PerSet: map[string]SetFit{}}
	for i, s := range sets {
		held, err := fit(i, -1)
		if err != nil {
			return nil, err
		}
		half := &Calibration{}
		for h := range 2 {
			m, err := fit(i, 1-h)
			if err != nil {
				return nil, err
			}
			scoreInto(half, halfOf(per[i], h), m)
		}
		rep.PerSet[s.Name] = SetFit{Searches: len(per[i]), HeldOut: score(per[i], held), HalfOut: half.finish(), All: score(per[i], full)}
	}
	return rep, nil
}

// halfOf returns the searches of ls at positions of parity h.
func halfOf(ls []labelledSearch, h int) []labelledSearch {
	var out []labelledSearch
	for i := h; i < len(ls); i += 2 {
		out = append(out, ls[i])
	}
	return out
}

// score is the calibration of a model's decisions on labelled searches, with the
// resolution rule of rank.Resolve for a model (a search whose answer the rules fix, such as
// an exact id or a pack, keeps the resolution it was given).
func score(ls []labelledSearch, m *rank.Model) *Calibration {
	c := &Calibration{}
	scoreInto(c, ls, m)
	return c.finish()
}

// scoreInto adds the model's decisions on ls to c (see score).
func scoreInto(c *Calibration, ls []labelledSearch, m *rank.Model) {
	for _, s := range ls {
		if !s.has {
			c.add(0, registry.NoConfidentMatch, s.l.Correct)
			continue
		}
		res, pc := m.Decide(s.l.Features)
		c.add(pc, res, s.l.Correct)
	}
}
