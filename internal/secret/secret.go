// Package secret encrypts values weft keeps at rest (platforms' OAuth tokens)
// with AES-256-GCM under a key from the environment (WEFT_ENCRYPTION_KEY).
// The database only ever sees ciphertext, so a leaked dump or backup
// carries no usable token.
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// KeySize is the key length AES-256 needs.
const KeySize = 32

// version prefixes every ciphertext, so a later key rotation or algorithm
// change can tell old values from new ones without guessing.
const version byte = 1

// ErrDecrypt is returned for a value that was not sealed with this key and
// associated data, or was altered since. It never says which, by design.
var ErrDecrypt = errors.New("secret: cannot decrypt value")

// ParseKey reads a 32-byte key written as hex (64 characters) or base64
// (standard or URL alphabet, padded or not).
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if len(s) == 2*KeySize {
		if k, err := hex.DecodeString(s); err == nil {
			return k, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil && len(k) == KeySize {
			return k, nil
		}
	}
	return nil, fmt.Errorf("secret: key must be %d bytes, as 64 hex characters or base64", KeySize)
}

// Cipher seals and opens values with one key. It is safe for concurrent use.
type Cipher struct {
	aead cipher.AEAD
}

// NewCipher returns a Cipher for a 32-byte key (see ParseKey).
func NewCipher(key []byte) (*Cipher, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("secret: key must be %d bytes, got %d", KeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secret: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secret: %w", err)
	}
	return &Cipher{aead: aead}, nil
}

// Seal encrypts plaintext. The associated data is authenticated but not
// stored: callers pass where the value lives (its row and column), so a
// ciphertext copied to another row does not open there.
func (c *Cipher) Seal(plaintext, associated []byte) ([]byte, error) {
	nonce := make([]byte, c.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("secret: nonce: %w", err)
	}
	out := make([]byte, 0, 1+len(nonce)+len(plaintext)+c.aead.Overhead())
	out = append(out, version)
	out = append(out, nonce...)
	return c.aead.Seal(out, nonce, plaintext, associated), nil
}

// Open decrypts a value from Seal with the same associated data.
func (c *Cipher) Open(sealed, associated []byte) ([]byte, error) {
	n := c.aead.NonceSize()
	if len(sealed) < 1+n+c.aead.Overhead() || sealed[0] != version {
		return nil, ErrDecrypt
	}
	out, err := c.aead.Open(nil, sealed[1:1+n], sealed[1+n:], associated)
	if err != nil {
		return nil, ErrDecrypt
	}
	return out, nil
}
