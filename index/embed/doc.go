// Package embed turns text into vectors for semantic retrieval: the Embedder interface and
// its implementations.
//
// # Basics
//
//   - Hashed (NewHashed) is the default: offline, pure Go, no model files. Its features are
//     hashed character n-grams of words, CJK unigrams and bigrams, and the concepts of the
//     bilingual lexicon of package text, so "删除日程" and "delete a schedule event" meet
//     through the concepts delete and schedule. It is sparse: use EmbedSparse and an
//     inverted index.
//   - Model2Vec (LoadModel2Vec) reads a static-embedding model directory the user
//     supplies (tokenizer.json + model.safetensors) and mean-pools token vectors.
//   - HTTP (NewHTTP) calls an OpenAI-compatible /v1/embeddings or an Ollama /api/embed
//     endpoint.
//   - WithCache puts a Cache (NewMemoryCache, or a Badger-backed one elsewhere) in front of
//     any Embedder, keyed by the embedder's ID and the SHA-256 of the text.
//
// Every Embedder returns L2-normalised vectors, so a dot product is the cosine. An ID
// changes whenever the vectors for the same text could change, so caches keyed by it stay
// valid.
//
// # Caveats
//
// No code here downloads anything: model directories and endpoints are configured by the
// user. Model2Vec supports WordPiece, WordLevel and Unigram tokenizers, not BPE.
package embed
