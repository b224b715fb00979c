// Package gentools holds tools of each shape the oniondoc generator writes
// a Call for. onion's tests call them through their generated Calls and
// by reflection, and compare.
package gentools

import (
	"context"
	"errors"
	"fmt"
	"image"
	"time"
)

//go:generate go run github.com/onionkit/onion/cmd/oniondoc

// Args are Greet's parameters.
type Args struct {
	// Name is who to greet.
	Name string `json:"name"`
	// N is how many times.
	N int `json:"n" jsonschema:"minimum=1,maximum=9"`
}

// Result is a greeting.
type Result struct {
	Greeting string `json:"greeting"`
	N        int    `json:"n"`
}

// Greet greets someone, n times.
//
//onion:intent read
func Greet(ctx context.Context, a Args) (Result, error) {
	if a.Name == "nobody" {
		return Result{Greeting: "unused"}, errors.New("nobody to greet")
	}
	return Result{Greeting: "hello " + a.Name, N: a.N}, ctx.Err()
}

// GreetPtr greets someone, given a pointer to the parameters.
//
//onion:intent read
func GreetPtr(a *Args) Result { return Result{Greeting: "hi " + a.Name, N: a.N} }

// Add returns the sum of two numbers.
//
// a: the first number
// b: the second number
//
//onion:intent read
func Add(a, b float64) float64 { return a + b }

// Check fails when n is odd and strict is set.
//
// n: the number to check
// strict: whether to fail
//
//onion:intent read
func Check(ctx context.Context, n int, strict bool) error {
	if strict && n%2 == 1 {
		return fmt.Errorf("%d is odd", n)
	}
	return nil
}

// Ping answers.
//
//onion:intent read
func Ping() string { return "pong" }

// Touch does nothing at a time, every so often.
//
// at: when
// every: how often
//
//onion:intent read
func Touch(at time.Time, every time.Duration) {}

// Panic panics with msg.
//
// msg: what to panic with
//
//onion:intent read
func Panic(msg string) string { panic(msg) }

// Move moves a point one step right: its argument is a struct of another
// package.
//
//onion:intent read
func Move(p image.Point) image.Point { return p.Add(image.Pt(1, 0)) }

// Counter counts.
type Counter struct{ n int }

// Inc adds by to the count and returns it.
//
// by: how much to add
//
//onion:intent write
func (c *Counter) Inc(by int) int {
	c.n += by
	return c.n
}

// Get returns the count.
//
//onion:intent read
func (c Counter) Get() int { return c.n }

// String is not a tool.
func (c Counter) String() string { return fmt.Sprint(c.n) }
