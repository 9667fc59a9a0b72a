// Package bounded owns how much istioctl reads of one input: a user's file or standard
// input (MaxFile) and a payload decompressed from the cluster (MaxUnzipped). Every reader
// of such input goes through it, so a 100 GiB file, an endless pipe or a gzip bomb in a
// Secret is refused having read at most one byte past the limit.
package bounded
