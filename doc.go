// Package capdex is the module root: a capability search engine for LLM agent harnesses.
// The code lives in the packages below (docs/ARCHITECTURE.md lists them and their one job
// each); this package holds only the repository-wide checks of lint_test.go.
package capdex
