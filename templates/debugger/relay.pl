# replay --debugger: one client's bytes to the debugger listening on 127.0.0.1:PORT inside the
# debuggee's container, and back. Run there by the engine (an exec), its stdin and stdout the
# stream replay relays from its own 127.0.0.1 listener (replay/debugport.py): the container needs
# no network and publishes no port. perl-base is essential on Debian and Ubuntu bases; an image
# without perl is refused before the run (debugport.require_relay).
use strict;
use warnings;
use IO::Socket::INET;
use IO::Select;

my $port = shift or die "usage: relay.pl PORT\n";
my $debugger = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port, Proto => 'tcp') or exit 111;
binmode STDIN;
binmode STDOUT;
my $select = IO::Select->new(\*STDIN, $debugger);
my $buf;
while (my @ready = $select->can_read) {
    for my $from (@ready) {
        my $n = sysread($from, $buf, 65536);
        exit 0 unless $n;
        my $to = fileno($from) == fileno(STDIN) ? $debugger : \*STDOUT;
        my $off = 0;
        while ($off < $n) {
            my $w = syswrite($to, $buf, $n - $off, $off);
            exit 0 unless $w;
            $off += $w;
        }
    }
}
