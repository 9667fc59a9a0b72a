// Package action holds the lifecycle operations as values: Install (install and upgrade),
// Rollback, Uninstall, the tag operations, Verify and Precheck, ManifestGenerate, the
// profile operations, History and Version. Each is a struct of its settings with a Run
// method; the writing ones also have Plan, which reads and decides without writing, so a
// caller can show the plan and ask before Run carries it out.
//
// Everything an operation decides lives here; the command layer (pkg/cmd) only turns flags
// into these structs, asks for confirmation and hands results and events to pkg/printer.
// The actions never print: writing actions emit typed events (operator/event) to their
// sink, including their own plan and done; Verify and Precheck return their report.
//
// Every operation that writes goes through one protocol (protocol.go): plan, lock,
// re-plan, carry out, record, done with its exit code. A call is a value (run), never
// state in a configuration struct; the cluster client refuses any write made outside a
// run. The version this istioctl was built with comes in as Config.Version.
package action
