package report

// ServersTable lists the ping-pong servers each run used when any run
// named its own (pingpong.servers), so that a comparison of
// implementations says which ran; ok is false when every run used cnperf's.
func ServersTable(runs []Run) (t Table, ok bool) {
	t = Table{ID: "tab-servers", Title: "Ping-pong servers",
		Caption: "The implementation of the protocol each run measured: the spec's pingpong.servers (argv on the netns driver, image and command on docker), or cnperf's own.",
		Columns: []string{"run", "ping", "pong"}}
	for _, run := range runs {
		sv := run.Meta.Spec.PingPong.Servers
		if run.Meta.Spec.Socket() {
			continue
		}
		ok = ok || sv != nil
		ping, pong := sv.Command("ping"), sv.Command("pong")
		if ping == "" {
			ping = "cnperf serve ping"
		}
		if pong == "" {
			pong = "cnperf serve pong"
		}
		t.Rows = append(t.Rows, []Cell{{Text: run.Label}, {Text: ping}, {Text: pong}})
	}
	return t, ok
}
