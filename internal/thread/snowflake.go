package thread

import (
	"strconv"
	"time"
)

// A Discord id is a snowflake: an unsigned 64-bit number, written in
// decimal, whose top 42 bits are the milliseconds since Discord's epoch
// (the first instant of 2015) when the object it names was made.
const (
	discordEpochMillis = 1420070400000
	snowflakeTimeShift = 22
)

// IsSnowflake reports whether s looks like a Discord id: 17 to 20 digits
// that fit in 64 bits.
func IsSnowflake(s string) bool {
	if len(s) < 17 || len(s) > 20 {
		return false
	}
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil
}

// CompareSnowflakes orders Discord ids numerically. Ids are decimal strings
// without leading zeros, so string order alone is wrong (never ORDER BY a
// text snowflake) but length first, then text, is right.
func CompareSnowflakes(a, b string) int {
	switch {
	case len(a) != len(b):
		return len(a) - len(b)
	case a < b:
		return -1
	case a > b:
		return 1
	default:
		return 0
	}
}

// SnowflakeTime is when the Discord object id names was made: a message's
// id carries the time Discord itself shows. It is zero when id is not a
// number.
func SnowflakeTime(id string) time.Time {
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(int64(n>>snowflakeTimeShift) + discordEpochMillis)
}

// SnowflakeAt is the lowest snowflake of an object made at t; the low bits
// are free for a sequence. Fakes and tests make ids with it.
func SnowflakeAt(t time.Time) uint64 {
	return uint64(t.UnixMilli()-discordEpochMillis) << snowflakeTimeShift
}
