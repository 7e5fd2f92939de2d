package actors

import (
	"errors"
	"fmt"
)

// Sentinel errors of the actors package.
var (
	// ErrClosed is returned by Search and SearchStream after Close, and is the Err of
	// the TimedOut Evidence given to steps still unanswered when Close ended their search.
	ErrClosed = errors.New("actors: system closed")
	// ErrBadJob is wrapped by the error Search and SearchStream return for a nil Job,
	// a nil Retrieve or Rank, a Step with an unknown Kind or a negative Deadline.
	ErrBadJob = errors.New("actors: invalid job")
	// ErrOverloaded is the Err of TimedOut Evidence for a step that was not queued
	// because every retriever mailbox of its kind was full.
	ErrOverloaded = errors.New("actors: retriever mailbox full")
	// ErrLate is the Err of TimedOut Evidence whose retriever answered after the step's
	// deadline; its hits were dropped.
	ErrLate = errors.New("actors: evidence arrived after its deadline")
	// ErrPanic is wrapped by a *PanicError: a RetrieveFunc or RankFunc panicked.
	ErrPanic = errors.New("actors: panic")
)

// PanicError reports a recovered panic. It is the Err of Crashed Evidence, and the
// error of a search whose final Rank call panicked.
type PanicError struct {
	// Where names what panicked: a retriever kind such as "lexical", or "rank".
	Where string
	// Value is the value passed to panic.
	Value any
	// Stack is the panicking goroutine's stack.
	Stack []byte
}

// Error implements error.
func (e *PanicError) Error() string {
	return fmt.Sprintf("actors: %s panicked: %v", e.Where, e.Value)
}

// Unwrap returns ErrPanic.
func (e *PanicError) Unwrap() error { return ErrPanic }
