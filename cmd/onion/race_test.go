//go:build race

package main

// buildFlags build the command under test with the race detector when the
// tests run with it.
var buildFlags = []string{"-race"}
