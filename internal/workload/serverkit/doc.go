// Package serverkit holds what every socket server (stream, rr, udp) does
// besides its data path: one TCP and one UDP socket on one port
// (ListenPair), a bound on the connections served at once (Gate), test
// slots and the --tests bound (Slots, MaxTests), control-connection
// timeouts, a client's strings clipped for logs (Clip), GOMAXPROCS lent to
// hot threads (Procs) and the `cnperf serve NAME` command around a server
// (Command). Each server keeps only its protocol and data path.
package serverkit
