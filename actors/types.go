package actors

import (
	"context"
	"log/slog"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/registry"
)

// RetrieveFunc runs one retriever kind synchronously and returns its hits, best
// first, restricted to the documents in allow (nil allows every document).
// It is called on a retriever actor, concurrently with other calls (of other kinds,
// of other searches, and of the same kind when Options.PerKind > 1). ctx carries the
// step's deadline and is done when the deadline passes, the caller's context is done,
// or the System closes; it must not be used after the call returns.
type RetrieveFunc func(ctx context.Context, k index.Kind, q *index.Query, allow *roaring.Bitmap, limit int) ([]index.Hit, error)

// Step is one planned retriever call of a search.
type Step struct {
	// Kind is the retriever to run.
	Kind index.Kind
	// Deadline is measured from the start of the search; 0 means DefaultDeadline(Kind).
	Deadline time.Duration
	// Limit is passed to the RetrieveFunc as is.
	Limit int
}

// DefaultDeadline is a Step's deadline when it gives none: k.DefaultDeadline().
func DefaultDeadline(k index.Kind) time.Duration { return k.DefaultDeadline() }

// Outcome says how a step ended.
type Outcome uint8

// Outcomes.
const (
	// OK: the retriever answered in time; its hits count.
	OK Outcome = iota
	// TimedOut: no answer before the step's deadline (not run, still running, answered
	// late, overloaded, or cut short by the caller's context or Close); no hits.
	TimedOut
	// Failed: the RetrieveFunc returned an error other than a deadline.
	Failed
	// Crashed: the RetrieveFunc panicked; Err is a *PanicError.
	Crashed
)

var outcomeNames = [...]string{"ok", "timed_out", "failed", "crashed"}

// String returns "ok", "timed_out", "failed" or "crashed".
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "unknown"
}

// Evidence is what one step produced.
type Evidence struct {
	// Kind is the step's retriever.
	Kind index.Kind
	// Hits are the retriever's hits, best first; nil unless Outcome is OK.
	Hits []index.Hit
	// Outcome says how the step ended.
	Outcome Outcome
	// Err explains an Outcome other than OK (context.DeadlineExceeded, ErrLate,
	// ErrOverloaded, ErrClosed, the caller's ctx.Err(), the retriever's error, or a
	// *PanicError).
	Err error
	// Took is how long the RetrieveFunc ran (0 when it did not run).
	Took time.Duration
}

// Gathered is what a gather actor holds for one search, as handed to RankFunc.
// It and everything it points to except Evidence[i].Hits is reused after Rank returns.
type Gathered struct {
	// Planned is the Job's plan with default deadlines filled in.
	Planned []Step
	// Evidence is in arrival order. When Final, it holds exactly one entry per planned
	// step: steps that never answered appear last, in plan order, as TimedOut.
	Evidence []Evidence
	// Candidates is the union of the OK hits' documents, capped at Job.MaxCandidates.
	Candidates *roaring.Bitmap
	// Pending lists, in plan order, the kinds of the steps without an in-time answer:
	// while not Final, the ones still awaited or already timed out; when Final, exactly
	// the steps whose Evidence is TimedOut.
	Pending []index.Kind
	// Final is set on the last call for the search.
	Final bool
	// Elapsed is the time since the search started.
	Elapsed time.Duration
}

// Meta fills the retriever fields of a registry.SearchMeta from g: planned,
// completed (OK), timed-out and failed (Failed or Crashed) retrievers by Kind name,
// the candidate count, Partial (not Final, or any step not OK) and TookUS.
// ReturnedCount and Generation are left for the caller.
func (g *Gathered) Meta() registry.SearchMeta {
	m := registry.SearchMeta{
		PlannedRetrievers:   make([]string, 0, len(g.Planned)),
		CompletedRetrievers: []string{},
		TimedOutRetrievers:  []string{},
		Partial:             !g.Final,
		TookUS:              g.Elapsed.Microseconds(),
	}
	for _, st := range g.Planned {
		m.PlannedRetrievers = append(m.PlannedRetrievers, st.Kind.String())
	}
	for _, ev := range g.Evidence {
		switch ev.Outcome {
		case OK:
			m.CompletedRetrievers = append(m.CompletedRetrievers, ev.Kind.String())
		case TimedOut:
			m.TimedOutRetrievers = append(m.TimedOutRetrievers, ev.Kind.String())
			m.Partial = true
		default:
			m.FailedRetrievers = append(m.FailedRetrievers, ev.Kind.String())
			m.Partial = true
		}
	}
	if g.Candidates != nil {
		m.CandidateCount = int(g.Candidates.GetCardinality())
	}
	return m
}

// RankFunc turns what was gathered so far into a response. It runs on a gather
// actor, never concurrently for one search; it must not retain g (see Gathered).
// A nil return from a partial call sends no update. A panic is recovered: a partial
// call's panic sends no update, a final call's panic becomes the search's error.
type RankFunc func(g *Gathered) *registry.SearchResponse

// Job is one search to run. The System reads it during Search/SearchStream and the
// RetrieveFunc and RankFunc calls; the caller must not modify it until the search ends.
type Job struct {
	// Query is passed to every RetrieveFunc call.
	Query *index.Query
	// Allow is the hard pre-filter passed to every RetrieveFunc call; nil allows all.
	Allow *roaring.Bitmap
	// Plan lists the steps to run; an empty plan ranks nothing at once.
	Plan []Step
	// Retrieve runs one step; required.
	Retrieve RetrieveFunc
	// Rank builds the response; required.
	Rank RankFunc
	// Stream asks for a partial Rank call after each arrival that adds hits.
	Stream bool
	// Inline marks the kinds (bit 1<<Kind) whose RetrieveFunc calls are CPU-bound and
	// return promptly, never blocking on I/O or sleeping; marking any kind says the same
	// of Rank. A blocking Search whose every planned kind is marked lends its calling
	// goroutine to the actors when its expected work is small (Options.InlineBelow) or it
	// is the only search in progress (Alone; see the package doc): it queues its messages and
	// runs them, and any other such search's, itself until its answer is ready, none is
	// queued, or the next run starts with another search's message, which it hands to a
	// worker. The actors, their mailboxes and the messages stay as they are; only the
	// goroutine that runs them changes. A step that blocks despite the mark delays the
	// answer past its deadline: leave such kinds unmarked.
	Inline uint16
	// Alone says that the caller knows of no other search in progress, being prepared or
	// running, on this System: a blocking Search of a job marked Inline may then be helped
	// by its caller (see the package doc). Leave it false when unsure.
	Alone bool
	// MaxCandidates caps Gathered.Candidates; 0 means no cap. When over the cap the
	// best-ranked hits are kept: rank 1 of every retriever (in arrival order), then
	// rank 2, and so on.
	MaxCandidates int
}

// Update is one response of SearchStream.
type Update struct {
	// Response is the RankFunc's result (nil when Err is set).
	Response *registry.SearchResponse
	// Final is set on the last update, after which the channel is closed.
	Final bool
	// Err is set on the final update when the final Rank call panicked (a *PanicError).
	Err error
}

// Options configures a System. The zero value is usable.
type Options struct {
	// MailboxSize bounds the requests waiting in each retriever actor's mailbox;
	// default 64*GOMAXPROCS. A step finding every mailbox of its kind full is answered
	// at once as TimedOut with ErrOverloaded.
	MailboxSize int
	// PerKind is the number of retriever actors per index.Kind; default 1.
	PerKind int
	// Gatherers is the number of gather actors; default GOMAXPROCS.
	Gatherers int
	// Workers bounds the dispatcher goroutines kept parked between runs (more are
	// started while every one is busy, and exit when idle); default twice the number
	// of actors (NumKinds*PerKind + Gatherers).
	Workers int
	// Logger receives recovered panics (Warn) and protoactor's own logging; nil discards.
	Logger *slog.Logger
	// InlineBelow: a search marked Job.Inline runs on its caller alone when the expected
	// run times of its steps (a moving average per kind) beside its longest one sum to
	// less than this, so that a second processor could take over less work than waking
	// it costs. Default 40µs; negative never runs a search, small or not, on its caller.
	// On the 2-core VM of the benchmarks, a search run inline took 18-22% less wall time
	// than one handed to workers on catalogues of 200-950 tools (little work beside the
	// longest step) and 4-5% more on 4,000-10,000 (lexical and semantic overlapped on two
	// processors), in interleaved runs; inline searches also spend no CPU waking idle
	// processors.
	InlineBelow time.Duration
}
