package record

import "crypto/rand"

// NewID returns a short random id for a run: prefix and four characters of
// [a-z0-9]. Lab names embed it, so runs side by side never collide.
func NewID(prefix string) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return prefix + string(b)
}
