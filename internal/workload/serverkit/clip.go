package serverkit

// maxClip is how much of a client's string an error or a log line quotes.
const maxClip = 64

// Clip shortens a client's string for an error or a log line (which quote
// it with %q, so it cannot forge a line).
func Clip(s string) string {
	if len(s) > maxClip {
		return s[:maxClip] + "..."
	}
	return s
}
