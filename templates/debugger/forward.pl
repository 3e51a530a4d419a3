# replay --debugger: forward TCP connections from the published port to the debugged command.
# Runs in a container of its own (the Debian base: perl-base is essential there) on the
# attempt's internal network and a bridge publishing to 127.0.0.1 only; the debugged command
# keeps the internal network alone. Arguments: LISTEN_PORT TARGET_HOST TARGET_PORT.
use strict;
use warnings;
use IO::Socket::INET;
use IO::Select;

my ($port, $host, $target_port) = @ARGV;
my $server = IO::Socket::INET->new(LocalPort => $port, Listen => 16, ReuseAddr => 1) or die "listen: $!\n";
$SIG{CHLD} = 'IGNORE';
$| = 1;
print "forwarding $port to $host:$target_port\n";
while (my $client = $server->accept) {
    next if fork;
    my $target = IO::Socket::INET->new(PeerAddr => $host, PeerPort => $target_port) or exit 1;
    my $select = IO::Select->new($client, $target);
    my $buf;
    while (my @ready = $select->can_read) {
        for my $from (@ready) {
            my $to = $from == $client ? $target : $client;
            my $n = sysread($from, $buf, 65536);
            exit 0 unless $n;
            syswrite($to, $buf) or exit 0;
        }
    }
}
