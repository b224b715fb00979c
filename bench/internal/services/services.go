// Package services holds generated tool types for BenchmarkDerive: many
// distinct struct types with ten documented methods each. The types are
// written by go generate in bench/ (bench/run does it) and not kept in git.
package services

// All are the generated types, in file order; empty until go generate has
// run.
var All []any
