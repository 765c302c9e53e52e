// Package jsonnum keeps JSON numbers exact where float64 cannot: the
// normal form of a number in agentloop's JSON values is a float64, except
// for an integer beyond ±2^53, which float64 cannot hold exactly; that one
// stays a json.Number holding its text, so that it reaches an int64 or
// uint64 field exactly.
package jsonnum

import (
	"encoding/json"
	"math"
	"strconv"
)

// maxExact is the largest integer below which every integer has an exact
// float64.
const maxExact = 1 << 53

// Normal returns the normal form of the JSON number text: a float64, or
// json.Number(text) for an integer literal beyond ±2^53 (also one past the
// range of int64 and uint64). Text that is not a number, or a number past
// float64's range that is not an integer literal (1e400), gives false.
func Normal(text string) (any, bool) {
	if IsBigInteger(text) {
		return json.Number(text), true
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !isRange(err) {
		return nil, false
	}
	if math.IsInf(f, 0) {
		return nil, false
	}
	return f, true
}

// IsBigInteger reports whether text is an integer literal (an optional
// minus and digits, as JSON writes integers) beyond ±2^53.
func IsBigInteger(text string) bool {
	digits := text
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 1 && digits[0] == '0' {
		return false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return false
		}
	}
	if len(digits) < 16 {
		return false
	}
	u, err := strconv.ParseUint(digits, 10, 64)
	return err != nil || u > maxExact
}

// FromInt returns the normal form of an int64.
func FromInt(i int64) any {
	if i > maxExact || i < -maxExact {
		return json.Number(strconv.FormatInt(i, 10))
	}
	return float64(i)
}

// FromUint returns the normal form of a uint64.
func FromUint(u uint64) any {
	if u > maxExact {
		return json.Number(strconv.FormatUint(u, 10))
	}
	return float64(u)
}

// Float returns a number's float64, rounded for a json.Number.
func Float(n json.Number) float64 {
	f, _ := strconv.ParseFloat(string(n), 64)
	return f
}

func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}
