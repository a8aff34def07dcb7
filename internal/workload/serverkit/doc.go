// Package serverkit holds what the socket servers (stream, rr, udp, grid)
// share besides their data paths: their connections (conn.go: one TCP and
// one UDP socket on a port, control answers and timeout, clipped client
// strings; fd.go: the socket under a conn, for raw system calls),
// admission (admit.go: the --tests bound, test slots, a cap on
// connections and the accept loop behind it), thread tuning (procs.go: Ps
// lent to hot threads, yields) and the `cnperf serve NAME` command
// (command.go).
package serverkit
