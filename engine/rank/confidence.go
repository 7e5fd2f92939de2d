package rank

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/capdex/capdex/registry"
)

// The features of a ranking that the confidence model reads, in the order of
// FeatureNames. They are scale-free where they can be (fusion scores are relative to the
// other candidates of the same search, so a bare score means little from one catalogue to
// the next): shares, ratios, ranks and logarithms.
const (
	fTop          = iota // the best usable candidate's score, log-scaled
	fRelMargin           // (best − next) / best: its lead over the next usable candidate
	fRelThird            // (best − third) / best
	fCoverage            // the best candidate's Coverage: how much of the request it speaks to
	fAgree               // share of the retrievers that answered whose first hit is the best candidate
	fSources             // share of the retrievers that answered that returned the best candidate
	fLexFirst            // the lexical retriever ranks it first
	fSemFirst            // the semantic retriever ranks it first
	fTerms               // log(1 + the query's word count)
	fMatched             // log(1 + intents, entities and symptoms of the query it matched)
	fZh                  // the query is Chinese
	fCovMargin           // Coverage × relative margin: a lead that speaks to the request
	fCands               // log(1 + candidates)
	fSemRaw              // the best candidate's semantic similarity (0 when the retriever missed it)
	fSemLead             // the semantic retriever's first raw score less its second, over the first
	fLexLead             // the lexical retriever's first raw score less its second, over the first
	fLexShare            // the best candidate's lexical raw score over the lexical first's
	fLexPerTerm          // log(1 + the best candidate's lexical raw score per query word)
	fRich                // the best candidate declares intents, entities or symptoms (a curated definition, not a bare tool)
	fRichCoverage        // rich × coverage: coverage means more over a curated text
	fRichMatched         // rich × matched signals
	fEntityAgree         // the query names entities and the best candidate is about one of them
	fEntityMiss          // the query names entities; the best candidate declares entities, none of them
	fIntentAgree         // the query names intents and the best candidate does one of them
	fIntentMiss          // the query names intents; the best candidate declares intents, none of them
	fDupText             // the closest text (title, summary, id words) of the runners-up (the next two usable candidates, ties included) to the best's: 1 for a near duplicate
	fDupVerb             // a usable runner-up at the next score does what the best does (the same primary intent, or the same leading verb of its name)
	fDupXMargin          // dup_text × (1 − rel_margin): a near duplicate close behind
	fEntityOwn           // the request names an entity the best candidate declares and no other candidate of its domain outside its pack does: what the request is about is this area's own ("train", not the "ticket" trains, flights and trips all sell)
	NumFeatures
)

// FeatureNames names the features of Features, in order.
var FeatureNames = [NumFeatures]string{
	"top_score", "rel_margin", "rel_third", "coverage", "agreement", "sources", "lexical_first",
	"semantic_first", "query_terms", "matched_signals", "lang_zh", "coverage_x_margin", "candidates",
	"semantic_raw", "semantic_lead", "lexical_lead", "lexical_share", "lexical_per_term",
	"rich", "rich_x_coverage", "rich_x_matched",
	"entity_agree", "entity_miss", "intent_agree", "intent_miss", "dup_text", "dup_verb", "dup_x_margin",
	"entity_own",
}

// Features returns the confidence features of a ranked candidate list (Rerank's order),
// read from its best usable candidate b (Resolve's): ok is false when there is none.
func Features(cands []Candidate, s Signals) (f [NumFeatures]float64, ok bool) {
	if len(cands) == 0 {
		return f, false
	}
	settle(cands, 1)
	var sc [3]float64
	b, n := -1, 0
	for i := range cands {
		if n == len(sc) {
			break
		}
		settle(cands, i+1)
		if !Usable(cands[i].Availability) {
			continue
		}
		if b < 0 {
			b = i
		}
		sc[n] = cands[i].Score
		n++
	}
	if b < 0 {
		return f, false
	}
	best := &cands[b]
	top := math.Max(sc[0], 1e-6)
	f[fTop] = math.Log(top)
	f[fRelMargin] = clamp01((sc[0] - sc[1]) / top)
	f[fRelThird] = clamp01((sc[0] - sc[2]) / top)
	f[fCoverage] = best.Coverage
	// Agreement: per retriever, which candidate it ranks first.
	answered, first, has := 0, 0, 0
	var seen [16]string
	for i := range cands {
		for _, e := range cands[i].Evidence {
			if e.Rank != 1 {
				continue
			}
			dup := false
			for _, r := range seen[:answered] {
				dup = dup || r == e.Retriever
			}
			if dup || answered == len(seen) {
				continue
			}
			seen[answered] = e.Retriever
			answered++
			if i == b {
				first++
			}
		}
	}
	var lex, sem [2]float64 // the retrievers' first and second raw scores
	for i := range cands {
		for _, e := range cands[i].Evidence {
			if e.Rank == 1 || e.Rank == 2 {
				// the largest, should a list repeat a rank: the order of cands does not matter
				switch e.Retriever {
				case Lexical:
					lex[e.Rank-1] = math.Max(lex[e.Rank-1], e.Raw)
				case Semantic:
					sem[e.Rank-1] = math.Max(sem[e.Rank-1], e.Raw)
				}
			}
		}
	}
	bestLex := 0.0
	for _, e := range best.Evidence {
		if e.Rank > 0 {
			has++
		}
		switch e.Retriever {
		case Lexical:
			bestLex = math.Max(bestLex, e.Raw)
		case Semantic:
			f[fSemRaw] = math.Max(f[fSemRaw], e.Raw)
		}
	}
	if sem[0] > 0 {
		f[fSemLead] = clamp01((sem[0] - sem[1]) / sem[0])
	}
	if lex[0] > 0 {
		f[fLexLead] = clamp01((lex[0] - lex[1]) / lex[0])
		f[fLexShare] = clamp01(bestLex / lex[0])
	}
	if answered > 0 {
		f[fAgree] = float64(first) / float64(answered)
		f[fSources] = math.Min(1, float64(has)/float64(answered))
	}
	if best.best(Lexical) == 1 {
		f[fLexFirst] = 1
	}
	if best.best(Semantic) == 1 {
		f[fSemFirst] = 1
	}
	words := 0
	for _, t := range s.Terms {
		if !strings.HasPrefix(t, "~") {
			words++
		}
	}
	f[fTerms] = math.Log1p(float64(words))
	f[fLexPerTerm] = math.Log1p(bestLex / float64(max(words, 1)))
	f[fMatched] = math.Log1p(float64(len(best.MatchedIntents) + len(best.MatchedEntities) + len(best.MatchedSymptoms)))
	if s.Lang == "zh" {
		f[fZh] = 1
	}
	f[fCovMargin] = f[fCoverage] * f[fRelMargin]
	f[fCands] = math.Log1p(float64(len(cands)))
	if cp := best.Cap; len(cp.Intents)+len(cp.Entities)+len(cp.Symptoms) > 0 {
		f[fRich] = 1
		f[fRichCoverage] = f[fCoverage]
		f[fRichMatched] = f[fMatched]
	}
	agreement(&f, best, s)
	if f[fEntityAgree] > 0 && ownEntity(cands, best) {
		f[fEntityOwn] = 1
	}
	if n > 1 {
		// The runners-up: the next usable candidates down to the last one's score, ties
		// included (the order of equal scores is not fixed), at most eight.
		bt, v := capWords(best.Cap), leadVerb(best.Cap)
		seenRunners := 0
		for i := b + 1; i < len(cands) && seenRunners < 8; i++ {
			settle(cands, i+1)
			c := &cands[i]
			if c.Score < sc[n-1] {
				break
			}
			if !Usable(c.Availability) {
				continue
			}
			seenRunners++
			f[fDupText] = math.Max(f[fDupText], jaccard(bt, capWords(c.Cap)))
			if v != "" && v == leadVerb(c.Cap) && c.Score >= sc[1] {
				f[fDupVerb] = 1
			}
		}
	}
	f[fDupXMargin] = f[fDupText] * (1 - f[fRelMargin])
	return f, true
}

// agreement sets the entity and intent agreement features: whether the best candidate is
// about what the request names and does what it asks, or declares other things.
func agreement(f *[NumFeatures]float64, best *Candidate, s Signals) {
	if len(s.Entities) > 0 {
		switch {
		case len(best.MatchedEntities) > 0:
			f[fEntityAgree] = 1
		case len(best.Cap.Entities) > 0:
			f[fEntityMiss] = 1
		}
	}
	if len(s.Intents) > 0 {
		switch {
		case len(best.MatchedIntents) > 0:
			f[fIntentAgree] = 1
		case len(best.Cap.Intents) > 0:
			f[fIntentMiss] = 1
		}
	}
}

// ownEntity reports whether one of the entities of the request that best matched is
// declared by no other candidate of best's domain (the first segment of its id) outside
// best's pack (its parent; the packs above it, which sum up their children's entities, do
// not count): the request names what this area is about, not a word that several areas of
// the domain share ("ticket" is sold by the train, flight and trip actions alike: the
// request is about travel, not which part of it; "train" is the trains pack's own). An
// entity another domain declares too does not count against it: "hotel" in a reimbursement
// policy and in a travel booking are different requests, told apart by their other words.
func ownEntity(cands []Candidate, best *Candidate) bool {
	pack := registry.Parent(best.Cap.ID)
	settle(cands, len(cands))
	for _, e := range best.MatchedEntities {
		own := true
		for i := range cands {
			c := cands[i].Cap
			if c == best.Cap || c.ResourceType == registry.TypePack && isAncestor(c.ID, best.Cap.ID) ||
				pack != "" && registry.Parent(c.ID) == pack || domainOf(c.ID) != domainOf(best.Cap.ID) || !containsFold(c.Entities, e) {
				continue
			}
			own = false
			break
		}
		if own {
			return true
		}
	}
	return false
}

// domainOf is the first segment of an id: "travel" of "travel.trains.book".
func domainOf(id string) string {
	d, _, _ := strings.Cut(id, ".")
	return d
}

// isAncestor reports whether id a names a pack above id b ("travel" and "travel.trains"
// above "travel.trains.book").
func isAncestor(a, b string) bool {
	return len(b) > len(a) && strings.HasPrefix(b, a) && b[len(a)] == '.'
}

// leadVerb is what a capability does: its primary intent, else the first word of its
// name's last segment ("queryPersonalTaxInfo" → "query", "get_weather" → "get").
func leadVerb(c *registry.Capability) string {
	if len(c.Intents) > 0 {
		return c.Intents[0]
	}
	leaf := registry.Leaf(c.ID)
	for i, r := range leaf {
		if i > 0 && (r == '_' || r == '-' || unicode.IsUpper(r)) {
			return strings.ToLower(leaf[:i])
		}
	}
	return strings.ToLower(leaf)
}

// capWords returns the words of a capability's title, summary and id (lower case, camel
// case and separators split, Chinese as overlapping character pairs), sorted and unique,
// for comparing two capabilities' texts.
func capWords(c *registry.Capability) []string {
	var out []string
	for _, t := range [...]string{c.Title, c.Summary, registry.Leaf(c.ID)} {
		out = appendWords(out, t)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func appendWords(out []string, t string) []string {
	rs := []rune(t)
	start := -1
	flush := func(i int) {
		if start >= 0 && i > start {
			out = append(out, strings.ToLower(string(rs[start:i])))
		}
		start = -1
	}
	for i, r := range rs {
		switch {
		case unicode.Is(unicode.Han, r):
			flush(i)
			if i+1 < len(rs) && unicode.Is(unicode.Han, rs[i+1]) {
				out = append(out, string(rs[i:i+2]))
			} else if i == 0 || !unicode.Is(unicode.Han, rs[i-1]) {
				out = append(out, string(r))
			}
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) && start >= 0 && i > 0 && unicode.IsLower(rs[i-1]) {
				flush(i)
			}
			if start < 0 {
				start = i
			}
		default:
			flush(i)
		}
	}
	flush(len(rs))
	return out
}

// jaccard is the share of the words of a and b (sorted, unique) that both hold.
func jaccard(a, b []string) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	both, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch strings.Compare(a[i], b[j]) {
		case 0:
			both++
			i++
			j++
		case -1:
			i++
		default:
			j++
		}
	}
	return float64(both) / float64(len(a)+len(b)-both)
}

func clamp01(v float64) float64 { return math.Min(1, math.Max(0, v)) }

// Model is the learned confidence of a search's top answer: two logistic regressions over
// Features (standardised by Mean and Scale), one for "the top answer is the one wanted"
// (Correct) and one for "the registry holds what was asked for among the first five"
// (Found). Fit learns it from labelled searches; `capdex calibrate --model` states the
// procedure. Resolve reads it through Thresholds.Model.
type Model struct {
	Features []string  `json:"features"`
	Mean     []float64 `json:"mean"`
	Scale    []float64 `json:"scale"`
	// Lo and Hi are the least and greatest value of each feature in the fitted searches;
	// Predict clips a feature to them, so that the linear model does not extrapolate
	// (a top score far below any it saw read as ever more confident). Absent in a model
	// fitted before they existed: no clipping.
	Lo []float64 `json:"lo,omitempty"`
	Hi []float64 `json:"hi,omitempty"`
	// Correct and Found are the weights of each regression: the bias, then one per feature.
	Correct []float64 `json:"correct"`
	Found   []float64 `json:"found"`
	// ConfidentAt is the least Correct probability of a confident answer; NoMatchBelow the
	// Found probability under which the answer is no_confident_match.
	ConfidentAt  float64 `json:"confident_at"`
	NoMatchBelow float64 `json:"no_match_below"`
	// ConfidentAtCurated replaces ConfidentAt when the best candidate is a curated
	// definition (the rich feature): curated and bare catalogues are calibrated apart, so
	// one probability does not buy the same precision in both. 0 means ConfidentAt.
	ConfidentAtCurated float64 `json:"confident_at_curated,omitempty"`
	// Samples is the number of labelled searches the model was fitted on.
	Samples int `json:"samples"`
}

// Validate checks that m fits the features of this build.
func (m *Model) Validate() error {
	if len(m.Features) != int(NumFeatures) || len(m.Mean) != int(NumFeatures) || len(m.Scale) != int(NumFeatures) ||
		len(m.Correct) != int(NumFeatures)+1 || len(m.Found) != int(NumFeatures)+1 {
		return fmt.Errorf("%w: model has %d features, this build %d", ErrBadThresholds, len(m.Features), NumFeatures)
	}
	for i, n := range m.Features {
		if n != FeatureNames[i] {
			return fmt.Errorf("%w: model feature %d is %q, want %q", ErrBadThresholds, i, n, FeatureNames[i])
		}
	}
	if len(m.Lo) != len(m.Hi) || len(m.Lo) != 0 && len(m.Lo) != int(NumFeatures) {
		return fmt.Errorf("%w: model has %d lo and %d hi values, want %d or none", ErrBadThresholds, len(m.Lo), len(m.Hi), NumFeatures)
	}
	for i := range m.Lo {
		if !(m.Lo[i] <= m.Hi[i]) {
			return fmt.Errorf("%w: model feature %s: lo %v above hi %v", ErrBadThresholds, m.Features[i], m.Lo[i], m.Hi[i])
		}
	}
	for _, v := range [][]float64{m.Mean, m.Scale, m.Correct, m.Found, m.Lo, m.Hi, {m.ConfidentAt, m.NoMatchBelow}} {
		for _, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("%w: model holds %v", ErrBadThresholds, x)
			}
		}
	}
	for _, s := range m.Scale {
		if s <= 0 {
			return fmt.Errorf("%w: model scale %v", ErrBadThresholds, s)
		}
	}
	if m.ConfidentAt < 0 || m.ConfidentAt > 1 || m.NoMatchBelow < 0 || m.NoMatchBelow > 1 || m.ConfidentAtCurated < 0 || m.ConfidentAtCurated > 1 {
		return fmt.Errorf("%w: model cut-offs %v, %v, %v outside 0..1", ErrBadThresholds, m.ConfidentAt, m.ConfidentAtCurated, m.NoMatchBelow)
	}
	return nil
}

// Predict returns the probabilities that the top answer is right and that what was asked
// for is among the first answers.
func (m *Model) Predict(f [NumFeatures]float64) (correct, found float64) {
	var z [NumFeatures]float64
	for i, x := range f {
		if len(m.Lo) > 0 {
			x = math.Min(math.Max(x, m.Lo[i]), m.Hi[i])
		}
		z[i] = (x - m.Mean[i]) / m.Scale[i]
	}
	return sigmoid(dot(m.Correct, z[:])), sigmoid(dot(m.Found, z[:]))
}

// ConfidentFor returns the least Correct probability of a confident answer for a search
// with features f: ConfidentAtCurated when its best candidate is a curated definition and
// the model has one, else ConfidentAt.
func (m *Model) ConfidentFor(f [NumFeatures]float64) float64 {
	if f[fRich] > 0 && m.ConfidentAtCurated > 0 {
		return m.ConfidentAtCurated
	}
	return m.ConfidentAt
}

// Decide is the model's resolution for a search with features f (outside the rules that
// fix it: browse, pack, vague, exact id): no_confident_match when the best candidate covers
// none of the request's words (coverage 0: the model would extrapolate) or the Found
// probability is under NoMatchBelow, confident when the Correct probability reaches
// ConfidentFor, else ambiguous. It returns the Correct probability too.
func (m *Model) Decide(f [NumFeatures]float64) (registry.Resolution, float64) {
	pc, pf := m.Predict(f)
	switch {
	case pf < m.NoMatchBelow || f[fCoverage] == 0:
		return registry.NoConfidentMatch, pc
	case pc >= m.ConfidentFor(f):
		return registry.Confident, pc
	}
	return registry.Ambiguous, pc
}

// Curated reports whether the features are of a search whose best candidate is a curated
// definition (declares intents, entities or symptoms).
func Curated(f [NumFeatures]float64) bool { return f[fRich] > 0 }

func dot(w, z []float64) float64 {
	s := w[0]
	for i, x := range z {
		s += w[i+1] * x
	}
	return s
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// Labelled is one search for Fit: its features and what was true of it.
type Labelled struct {
	Features [NumFeatures]float64
	// Correct: the top answer is the one wanted; Found: a wanted answer is among the first
	// five. A request the registry cannot serve is neither.
	Correct, Found bool
	// Weight is the sample's weight (0 counts as 1).
	Weight float64
}

// FitOptions tune Fit.
type FitOptions struct {
	// L2 is the ridge penalty on the (standardised) weights; 0 means 1.
	L2 float64
	// ConfidentAt and NoMatchBelow are copied into the model; 0 means 0.9 and 0.5.
	ConfidentAt, NoMatchBelow float64
	// Precision, when above 0, makes Fit choose the confident cut-offs itself, one for
	// curated definitions and one for bare tools (ChooseCutoffs), in place of ConfidentAt.
	Precision float64
}

// cutoffLow is the least confident cut-off ChooseCutoffs considers: a confident answer is
// at least as likely right as not.
const cutoffLow = 0.5

// ChooseCutoffs sets m's confident cut-offs from labelled searches: for the curated
// searches (best candidate a curated definition) and the bare ones apart, the least
// cut-off on a grid of 0.01 from 0.5 to 0.99 at which the weighted precision of the
// searches at or above it (their top answer right) is at least precision; 0.99 when none
// is. A regime without searches keeps ConfidentAt.
func ChooseCutoffs(m *Model, samples []Labelled, precision float64) {
	for _, curated := range []bool{false, true} {
		type pt struct {
			p, w float64
			ok   bool
		}
		var pts []pt
		for _, s := range samples {
			if Curated(s.Features) == curated {
				pc, _ := m.Predict(s.Features)
				pts = append(pts, pt{pc, weightOf(s), s.Correct})
			}
		}
		if len(pts) == 0 {
			continue
		}
		cut := 0.99
		for k := int(cutoffLow * 100); k < 99; k++ {
			t := float64(k) / 100
			var n, right float64
			for _, q := range pts {
				if q.p >= t {
					n += q.w
					if q.ok {
						right += q.w
					}
				}
			}
			if n > 0 && right >= precision*n {
				cut = t
				break
			}
		}
		if curated {
			m.ConfidentAtCurated = cut
		} else {
			m.ConfidentAt = cut
		}
	}
}

// Fit learns a Model from labelled searches: the features are standardised (mean 0,
// variance 1 over the weighted samples), then each regression is fitted by Newton's method
// (iteratively reweighted least squares) on the weighted log-likelihood with an L2 penalty,
// to convergence (at most 50 steps). It returns an error for no samples.
func Fit(samples []Labelled, o FitOptions) (*Model, error) {
	if len(samples) == 0 {
		return nil, fmt.Errorf("%w: no samples to fit", ErrBadThresholds)
	}
	if o.L2 == 0 {
		o.L2 = 1
	}
	if o.ConfidentAt == 0 {
		o.ConfidentAt = 0.9
	}
	if o.NoMatchBelow == 0 {
		o.NoMatchBelow = 0.5
	}
	m := &Model{Features: FeatureNames[:], Mean: make([]float64, NumFeatures), Scale: make([]float64, NumFeatures),
		Lo: slices.Clone(samples[0].Features[:]), Hi: slices.Clone(samples[0].Features[:]),
		ConfidentAt: o.ConfidentAt, NoMatchBelow: o.NoMatchBelow, Samples: len(samples)}
	wsum := 0.0
	for _, s := range samples {
		w := weightOf(s)
		wsum += w
		for i, x := range s.Features {
			m.Mean[i] += w * x
			m.Lo[i], m.Hi[i] = math.Min(m.Lo[i], x), math.Max(m.Hi[i], x)
		}
	}
	for i := range m.Mean {
		m.Mean[i] /= wsum
	}
	for _, s := range samples {
		w := weightOf(s)
		for i, x := range s.Features {
			d := x - m.Mean[i]
			m.Scale[i] += w * d * d
		}
	}
	for i := range m.Scale {
		m.Scale[i] = math.Sqrt(m.Scale[i] / wsum)
		if m.Scale[i] < 1e-9 {
			m.Scale[i] = 1
		}
	}
	x := make([][]float64, len(samples))
	w := make([]float64, len(samples))
	for k, s := range samples {
		row := make([]float64, NumFeatures+1)
		row[0] = 1
		for i, v := range s.Features {
			row[i+1] = (v - m.Mean[i]) / m.Scale[i]
		}
		x[k], w[k] = row, weightOf(s)*float64(len(samples))/wsum
	}
	yc := make([]float64, len(samples))
	yf := make([]float64, len(samples))
	for k, s := range samples {
		if s.Correct {
			yc[k] = 1
		}
		if s.Found {
			yf[k] = 1
		}
	}
	m.Correct = irls(x, yc, w, o.L2)
	m.Found = irls(x, yf, w, o.L2)
	if o.Precision > 0 {
		ChooseCutoffs(m, samples, o.Precision)
	}
	return m, nil
}

func weightOf(s Labelled) float64 {
	if s.Weight > 0 {
		return s.Weight
	}
	return 1
}

// irls fits weighted, L2-penalised logistic regression by Newton's method. The bias
// (column 0) is not penalised.
func irls(x [][]float64, y, w []float64, l2 float64) []float64 {
	d := len(x[0])
	beta := make([]float64, d)
	h := make([][]float64, d)
	for i := range h {
		h[i] = make([]float64, d+1)
	}
	for iter := 0; iter < 50; iter++ {
		for i := range h {
			clear(h[i])
		}
		for k, row := range x {
			p := sigmoid(dotAll(beta, row))
			g := w[k] * (y[k] - p)
			v := w[k] * math.Max(p*(1-p), 1e-9)
			for i := 0; i < d; i++ {
				h[i][d] += g * row[i]
				for j := 0; j <= i; j++ {
					h[i][j] += v * row[i] * row[j]
				}
			}
		}
		for i := 0; i < d; i++ {
			for j := 0; j < i; j++ {
				h[j][i] = h[i][j]
			}
			if i > 0 {
				h[i][i] += l2
				h[i][d] -= l2 * beta[i]
			}
		}
		step := solve(h)
		moved := 0.0
		for i := range beta {
			beta[i] += step[i]
			moved = math.Max(moved, math.Abs(step[i]))
		}
		if moved < 1e-8 {
			break
		}
	}
	return beta
}

func dotAll(b, row []float64) float64 {
	s := 0.0
	for i, v := range row {
		s += b[i] * v
	}
	return s
}

// solve solves the augmented system a (d rows of d+1 columns) by Gaussian elimination with
// partial pivoting; a is spoilt. A singular column gives a zero step.
func solve(a [][]float64) []float64 {
	d := len(a)
	for c := 0; c < d; c++ {
		p := c
		for r := c + 1; r < d; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		a[c], a[p] = a[p], a[c]
		if math.Abs(a[c][c]) < 1e-12 {
			continue
		}
		for r := c + 1; r < d; r++ {
			f := a[r][c] / a[c][c]
			for k := c; k <= d; k++ {
				a[r][k] -= f * a[c][k]
			}
		}
	}
	out := make([]float64, d)
	for c := d - 1; c >= 0; c-- {
		if math.Abs(a[c][c]) < 1e-12 {
			continue
		}
		s := a[c][d]
		for k := c + 1; k < d; k++ {
			s -= a[c][k] * out[k]
		}
		out[c] = s / a[c][c]
	}
	return out
}

//go:embed confidence_model.json
var defaultModelJSON []byte

// DefaultModel returns the model fitted on the project's labelled data (see
// docs/calibration.md), nil if the embedded copy does not fit this build's features (a
// build whose features changed must be refitted: TestDefaultModelFits fails until then).
func DefaultModel() *Model {
	m, err := DecodeModel(defaultModelJSON)
	if err != nil {
		return nil
	}
	return m
}

// DecodeModel parses a model written as JSON and validates it.
func DecodeModel(b []byte) (*Model, error) {
	var m Model
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadThresholds, err)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return &m, nil
}

// Confidence returns the probability that the ranking's top answer is the one wanted: 1
// for a usable exact-id hit at the top (Resolve answers it confident by rule), else the
// model's Correct probability for its best usable candidate, and 0 without a model or a
// usable candidate.
func Confidence(cands []Candidate, s Signals, t Thresholds) float64 {
	if len(cands) == 0 {
		return 0
	}
	settle(cands, 1)
	if cands[0].ExactHit() && Usable(cands[0].Availability) {
		return 1
	}
	if t.Model == nil {
		return 0
	}
	f, ok := Features(cands, s)
	if !ok {
		return 0
	}
	pc, _ := t.Model.Predict(f)
	return pc
}
