package embed

import "errors"

// Sentinel errors of the embed package.
var (
	// ErrModel is returned by LoadModel2Vec when a model file is missing or malformed.
	ErrModel = errors.New("embed: bad model")
	// ErrUnsupported is returned by LoadModel2Vec for a tokenizer or tensor type this
	// package does not implement (BPE, byte-level pre-tokenizers, integer embeddings…).
	ErrUnsupported = errors.New("embed: unsupported model feature")
	// ErrConfig is returned by HTTP.Embed when its options are invalid (unknown API, no
	// base URL or model).
	ErrConfig = errors.New("embed: bad embedder configuration")
	// ErrStatus is returned by HTTP.Embed when the endpoint answers with a non-2xx status;
	// the message holds the status and the start of the body.
	ErrStatus = errors.New("embed: endpoint error status")
	// ErrResponse is returned when an endpoint or a wrapped embedder answers with the wrong
	// number of vectors, inconsistent dimensions or an unreadable body.
	ErrResponse = errors.New("embed: bad embedding response")
)
