//go:build ignore

// A program in the package directory, excluded by its build constraint.
package main

func main() {}
