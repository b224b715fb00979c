// Package plain holds the tools of package bench again, word for word, in a
// package the oniondoc generator does not run in: onion calls these by
// reflection, as it does any func whose package registers no generated
// calls.
package plain

import (
	"context"
	"fmt"
)

// FlightArgs are the four parameters of BookFlight.
type FlightArgs struct {
	// From is the IATA code of the departure airport, such as "LIS".
	From string `json:"from"`
	// To is the IATA code of the arrival airport.
	To string `json:"to"`
	// Date is the day of the flight, as YYYY-MM-DD.
	Date string `json:"date"`
	// Seats is how many seats to book.
	Seats int `json:"seats" jsonschema:"minimum=1,maximum=9"`
}

// Booking is what BookFlight returns.
type Booking struct {
	Ref   string  `json:"ref"`
	Seats int     `json:"seats"`
	Price float64 `json:"price"`
}

// BookFlight books seats on a flight and returns the booking.
//
//onion:intent read
func BookFlight(ctx context.Context, args FlightArgs) (Booking, error) {
	if args.Seats < 1 {
		return Booking{}, fmt.Errorf("seats must be at least 1")
	}
	return Booking{Ref: args.From + args.To + args.Date, Seats: args.Seats, Price: 99.5 * float64(args.Seats)}, nil
}

// Add returns the sum of two numbers.
//
// a: the first number
// b: the second number
//
//onion:intent read
func Add(a, b float64) float64 { return a + b }
