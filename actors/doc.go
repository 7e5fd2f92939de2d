// Package actors runs one search as messages between long-lived actors: it fans a
// planned set of retriever steps out to per-kind retriever actors, each with its own
// mailbox and deadline, gathers their Evidence by document id, and hands every
// arrival to a ranking function supplied by the engine.
//
// # Basics
//
// A System owns one protoactor-go actor system with:
//
//   - a pool of retriever actors per index.Kind (Options.PerKind each, one by
//     default), picked round-robin, each with a bounded mailbox (Options.MailboxSize
//     requests). A request that finds every mailbox of its kind full is not queued
//     and never blocks its sender: its step is answered at once as TimedOut with
//     ErrOverloaded.
//   - a small pool of long-lived gather actors (Options.Gatherers), each holding
//     many in-flight searches keyed by search id, with one timer driving a queue
//     of search deadlines.
//   - a pool of long-lived worker goroutines that run mailbox wake-ups from one
//     first-in first-out queue. It wakes parked workers only as needed, and a
//     retriever's worker runs the gather actor it answered next, so a search costs few
//     goroutine hand-offs. A mailbox allocates nothing per message or per wake-up.
//
// Search and SearchStream submit a Job: the caller's goroutine registers the search
// with a gather actor and sends one request per Step straight to a retriever actor,
// with the gather actor as the reply target, the kinds that recently ran longest first
// so that they start first. A retriever skips a request already past its deadline,
// runs the Job's RetrieveFunc under a context bounded by the step's deadline, recovers
// a panic (Outcome Crashed), and sends its Evidence to the gather actor. The gather
// actor keeps every piece of Evidence, unions the hits into a candidate bitmap before
// each Rank call, and calls Job.Rank: after each useful arrival when streaming, and
// once with Gathered.Final set when every step answered, every unanswered step is past
// its deadline, the caller's context is done, or the System closes.
//
// A blocking Search whose Job marks every planned kind Inline (CPU-bound, never
// blocking) and whose steps' expected run times beside the longest one are below
// Options.InlineBelow lends its own goroutine to the actors instead: it queues its
// messages without waking a worker and runs them, and any other inline search's, until
// its answer is ready (a run that starts with a message of a search not inline goes to
// a worker, and the caller waits). The messages go through the same mailboxes to the same actors;
// only the goroutine differs. A small search then costs no goroutine hand-off at all,
// which matters where waking an idle processor costs more than the search's retrievers
// (see BenchmarkWakeLatency). A search with enough work beside its longest step for a
// second processor is helped when it is the only search in progress (Job.Alone and no
// other Search call): its caller wakes workers for the other processors and runs runs
// itself meanwhile, then watches the queue a moment for its gather actor's run, so that
// it ranks the search itself, before it parks; with other searches in progress the
// search is handed to workers (see System.mode).
//
// No futures are used on the search path; protoactor's own logging goes to
// Options.Logger (discarded when nil).
//
// # Caveats
//
//   - Job.Rank and the partial/final bookkeeping run on a gather actor: Rank is never
//     called concurrently for one search, but calls for different searches may run
//     concurrently on different gather actors. A slow Rank delays the other searches
//     of its gather actor.
//   - The *Gathered passed to Rank, its Planned, Evidence and Pending slices and its
//     Candidates bitmap are reused after Rank returns: Rank must copy what it keeps.
//     Evidence.Hits slices are whatever the RetrieveFunc returned and are not reused.
//   - A retriever actor runs one RetrieveFunc at a time. A RetrieveFunc that ignores
//     its context blocks its actor past the deadline; later requests queued behind it
//     are skipped once their own deadlines pass, and the searches themselves still end
//     on time. Raise Options.PerKind to run several RetrieveFuncs of one kind at once.
//   - The context given to a RetrieveFunc is valid only until it returns. Close
//     cancels it; Close waits for running RetrieveFuncs to return.
//   - A RetrieveFunc or RankFunc must not call Search, SearchStream or Close of its
//     own System: it would wait for the actor it runs on.
//   - An inline or helped search's steps run on its caller, which cannot leave a step at
//     its deadline: mark only kinds that return promptly. Such a caller may also run
//     other inline or helped searches' queued messages, Rank calls included.
package actors
