#!/usr/bin/perl
# A "hold at N" bot for `thousand evaluate --bot 'exec:perl tests/bots/hold.pl N'`,
# speaking the JSON-lines protocol of docs/bots.md with the core module JSON::PP.
# It sets aside the most points (the first legal action) and stops once the turn
# total reaches N or banking wins the game, where stopping is allowed.
use strict;
use warnings;
use JSON::PP;

my $hold = @ARGV ? $ARGV[0] : 20;
my $json = JSON::PP->new->canonical;
my ($goal, $name) = (0, "perl-hold:$hold");
$| = 1;                                   # answer at once: no output buffering

while (my $line = <STDIN>) {
    next unless $line =~ /\S/;
    my $msg = $json->decode($line);
    my $type = $msg->{type} // "";
    if ($type eq "hello") {
        $goal = $msg->{ruleset}{goal};
        print $json->encode({type => "ready", name => $name}), "\n";
    } elsif ($type eq "decide") {
        my $s = $msg->{state};
        my $first = $s->{legal}[0];       # the set-aside with the most points
        my @same = grep { join(",", @{$_->{keep}}) eq join(",", @{$first->{keep}}) } @{$s->{legal}};
        my $total = $s->{turn_total} + $first->{points};
        my $wins = $s->{me}{score} + $total >= $goal;
        my $then = "roll";
        if (grep { $_->{then} eq "stop" } @same) {
            $then = "stop" if $total >= $hold || $wins;
        } else {
            $then = $same[0]{then};       # no choice: echo the only continuation
        }
        print $json->encode({id => $msg->{id}, keep => $first->{keep}, then => $then}), "\n";
    } elsif ($type eq "bye") {
        last;
    }
}
