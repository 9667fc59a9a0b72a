// Package history owns install records: what each install, upgrade or rollback of a
// revision did, kept in the cluster as labelled Secrets of type istio.io/install-record in
// the istio namespace. It encodes and decodes records (gzip and JSON, size-bounded), stores,
// lists and updates them, picks a rollback target and trims a revision's history to its
// last N records. A record holds the resolved spec and the identities of the rendered
// objects, never their bodies, so no Secret data of the manifests can end up in one.
// It also seals the records that steer writes (these, and the revision upgrade's progress
// record): a digest of each kept on the istio Namespace, which no ServiceAccount an install
// creates may write, and judges each record's trust as read (seal.go).
// It decides nothing about installing.
package history
