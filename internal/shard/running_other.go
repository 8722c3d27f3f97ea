//go:build !unix

package shard

// running reports true: where processes cannot be asked after, a claim is
// never taken over.
func running(int) bool { return true }
