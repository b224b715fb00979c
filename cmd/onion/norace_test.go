//go:build !race

package main

// buildFlags build the command under test as go build does by default.
var buildFlags []string
