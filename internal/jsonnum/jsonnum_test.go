package jsonnum

import (
	"encoding/json"
	"math"
	"testing"
)

func TestNormal(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want any
	}{
		{"0", 0.0}, {"-3", -3.0}, {"2.5", 2.5}, {"1e2", 100.0}, {"9007199254740992", float64(1 << 53)},
		{"9007199254740993", json.Number("9007199254740993")},
		{"-9223372036854775808", json.Number("-9223372036854775808")},
		{"18446744073709551615", json.Number("18446744073709551615")},
		{"123456789012345678901234567890", json.Number("123456789012345678901234567890")},
		{"1.5e300", 1.5e300},
	} {
		got, ok := Normal(tc.in)
		if !ok || got != tc.want {
			t.Errorf("Normal(%s) = %#v, %v; want %#v", tc.in, got, ok, tc.want)
		}
	}
	for _, bad := range []string{"x", "1e400", "-1e999"} {
		if _, ok := Normal(bad); ok {
			t.Errorf("Normal accepted %s", bad)
		}
	}
	if FromInt(math.MaxInt64) != json.Number("9223372036854775807") || FromInt(5) != 5.0 || FromUint(math.MaxUint64) != json.Number("18446744073709551615") {
		t.Error("FromInt/FromUint")
	}
}
