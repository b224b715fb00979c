package mcpserver

import "time"

// Clock makes the approval gate read the time from now, so that a test can
// let a question expire without waiting.
func Clock(now func() time.Time) Option {
	return optionFunc(func(c *config) { c.now = now })
}
