%% The nodes suite on Erlang/OTP: remote send and call between two distributed `erl` nodes, the
%% reference Molo's node transport is compared against (bench/nodes/suite.ts).
%%
%% bench/nodes/erlang.ts compiles this into a temporary directory and starts two VMs on loopback,
%% both `+S 1:1` (Node runs actors on one thread), with long names and a shared cookie (epmd):
%%   peer:   erl ... -name b@127.0.0.1 -eval 'molo_nodes_bench:peer()'
%%   driver: erl ... -name a@127.0.0.1 -eval 'molo_nodes_bench:main(["b@127.0.0.1","remote_send","full"])'
%% The driver prints one line `ROW <json>` with the same sizes and fields as the Molo side.
-module(molo_nodes_bench).

-export([peer/0, main/1]).
-export([init/1, handle_call/3, handle_cast/2, handle_info/2]).

%% Keep in step with SIZES in suite.ts: {N, Rounds, Warmup}.
sizes(remote_send, full) -> {1000000, 3, 100000};
sizes(remote_send, quick) -> {100000, 1, 10000};
sizes(remote_call, full) -> {20000, 3, 2000};
sizes(remote_call, quick) -> {2000, 1, 200};
sizes(remote_call_concurrent, full) -> {100000, 3, 10000};
sizes(remote_call_concurrent, quick) -> {10000, 1, 1600}.

%% Keep in step with CONCURRENCY in suite.ts: callers with a call outstanding each.
-define(CONCURRENCY, 16).

%% ---- the peer node -----------------------------------------------------------------------------

%% A counter (counts whatever it receives; answers {count, From} and {reset, From}) and an echo
%% gen_server, both registered; then waits forever (the driver's suite kills the VM).
peer() ->
    logger:set_primary_config(level, none),
    {ok, _} = gen_server:start({local, echo}, ?MODULE, echo, []),
    register(counter, spawn(fun() -> count(0) end)),
    receive stop -> halt(0) end.

count(N) ->
    receive
        {reset, From} -> From ! reset, count(0);
        {count, From} -> From ! {count, N}, count(N);
        _ -> count(N + 1)
    end.

init(echo) -> {ok, echo}.
handle_call(Request, _From, State) -> {reply, Request, State}.
handle_cast(_, State) -> {noreply, State}.
handle_info(_, State) -> {noreply, State}.

%% ---- the driver ------------------------------------------------------------------------------------

main([PeerName, CaseName, Mode]) ->
    logger:set_primary_config(level, none),
    Peer = list_to_atom(PeerName),
    Case = list_to_atom(CaseName),
    wait_peer(Peer, 400),
    Row = run(Case, Peer, sizes(Case, list_to_atom(Mode))),
    io:put_chars(["ROW ", json([{'case', Case}, {impl, erlang} | Row]), "\n"]),
    halt(0).

wait_peer(Peer, 0) -> exit({peer_not_up, Peer});
wait_peer(Peer, K) ->
    Up = net_adm:ping(Peer) =:= pong andalso is_pid(rpc:call(Peer, erlang, whereis, [echo])),
    case Up of
        true -> ok;
        false -> timer:sleep(50), wait_peer(Peer, K - 1)
    end.

run(remote_send, Peer, Sizes) ->
    Counter = rpc:call(Peer, erlang, whereis, [counter]),
    measured(Peer, Sizes, fun(N) -> send_run(Counter, N) end, [send_oct]);
run(remote_call, Peer, Sizes) ->
    Echo = rpc:call(Peer, erlang, whereis, [echo]),
    measured(Peer, Sizes, fun(N) -> call_run(Echo, N) end, [send_oct, recv_oct]);
run(remote_call_concurrent, Peer, Sizes) ->
    Echo = rpc:call(Peer, erlang, whereis, [echo]),
    measured(Peer, Sizes, fun(N) -> concurrent_run(Echo, N, ?CONCURRENCY) end, [send_oct, recv_oct]).

%% N integers to the remote counter, then a count request behind them: done when it answers N.
send_run(Counter, N) ->
    Counter ! {reset, self()},
    receive reset -> ok end,
    Start = now_us(),
    produce(Counter, 0, N),
    Counter ! {count, self()},
    receive
        {count, N} -> ok;
        {count, Other} -> exit({lost_messages, N, Other})
    end,
    now_us() - Start.

produce(_, N, N) -> ok;
produce(Counter, I, N) ->
    Counter ! I,
    produce(Counter, I + 1, N).

%% N sequential gen_server:call round trips to the remote echo server.
call_run(Echo, N) ->
    Start = now_us(),
    Sum = call_loop(Echo, 0, N, 0),
    Sum = N * (N - 1) div 2,
    now_us() - Start.

%% N gen_server:call round trips from K processes at once, N div K each, one after another in each.
concurrent_run(Echo, N, K) ->
    Self = self(),
    Share = N div K,
    Start = now_us(),
    Pids = [spawn_link(fun() -> Self ! {done, self(), call_loop(Echo, I * Share, (I + 1) * Share, 0)} end) || I <- lists:seq(0, K - 1)],
    Sum = lists:sum([receive {done, Pid, S} -> S end || Pid <- Pids]),
    Sum = N * (N - 1) div 2,
    now_us() - Start.

call_loop(_, N, N, Sum) -> Sum;
call_loop(Echo, I, N, Sum) ->
    Value = gen_server:call(Echo, I),
    call_loop(Echo, I + 1, N, Sum + Value).

%% Warm up once, then the median rate of the timed rounds; bytes per message from the
%% distribution socket's counters (send, or send and receive for calls: both ways).
measured(Peer, {N, Rounds, Warmup}, Body, Counters) ->
    _ = Body(Warmup),
    Before = dist_bytes(Peer, Counters),
    Times = [Body(N) || _ <- lists:seq(1, Rounds)],
    After = dist_bytes(Peer, Counters),
    Rates = lists:sort([N / (T / 1.0e6) || T <- Times]),
    Rate = median(Rates),
    [{ops_per_s, round(Rate)}, {n, N}, {rounds, Rounds}, {us_per_op, 1.0e6 / Rate},
     {min_ops_per_s, round(hd(Rates))}, {max_ops_per_s, round(lists:last(Rates))},
     {spread_pct, (lists:last(Rates) - hd(Rates)) / Rate * 100},
     {bytes_per_msg, (After - Before) / (N * Rounds)}].

dist_bytes(Peer, Counters) ->
    {Peer, Port} = lists:keyfind(Peer, 1, erlang:system_info(dist_ctrl)),
    {ok, Stats} = inet:getstat(Port, Counters),
    lists:sum([V || {_, V} <- Stats]).

now_us() -> erlang:monotonic_time(nanosecond) / 1000.

median(Sorted) ->
    Len = length(Sorted),
    case Len rem 2 of
        1 -> lists:nth(Len div 2 + 1, Sorted);
        0 -> (lists:nth(Len div 2, Sorted) + lists:nth(Len div 2 + 1, Sorted)) / 2
    end.

json(Pairs) ->
    ["{", lists:join(",", [["\"", atom_to_list(K), "\":", value(V)] || {K, V} <- Pairs]), "}"].

value(V) when is_integer(V) -> integer_to_list(V);
value(V) when is_float(V) -> float_to_list(V, [{decimals, 3}, compact]);
value(V) when is_atom(V) -> ["\"", atom_to_list(V), "\""].
