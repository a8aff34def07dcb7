package server

import "bytes"

// BodyLen is the length of pong's body for a request of n bytes: n, and 4
// for n < 4 (the original answers any size below 4 with "pong").
func BodyLen(n int) int { return max(n, 4) }

// Body returns pong's body for a request of n bytes, as the original Go
// pong builds it: "p", BodyLen(n)-3 "o", "ng"; "pong" for n < 4. It is the
// reference the handler must match.
func Body(n int) []byte {
	n = BodyLen(n)
	b := bytes.Repeat([]byte{'o'}, n)
	b[0] = 'p'
	b[n-2], b[n-1] = 'n', 'g'
	return b
}
