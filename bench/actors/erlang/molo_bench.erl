%% The actors suite on Erlang/OTP: the reference Molo is compared against.
%%
%% bench/actors/erlang.ts compiles this into a temporary directory and runs one case per VM:
%%   erl +S 1:1 +P 2000000 -noshell -kernel logger_level none -pa <tmp> -eval 'molo_bench:main(["send","full"])'
%% Each case prints one line `ROW <json>`, with the same sizes and fields as the JavaScript
%% implementations (bench/actors/cases.ts). This module is also the callback module of the
%% gen_servers and supervisors it starts; init/1 tells them apart by its argument.
-module(molo_bench).

-export([main/1]).
-export([init/1, handle_call/3, handle_cast/2, handle_info/2]).

%% One restart per supervisor: a supervisor kept for many restarts grows its restart window
%% (OTP keeps every restart within the period in a list), which is not what restart latency measures.
-define(RESTART_BATCH, 1).
-define(MANY_ACTORS, 10000).
-define(INTENSITY, 1000000).
-define(PERIOD_S, 1).

%% Keep in step with SIZES in cases.ts: {N, Rounds, Warmup}.
sizes(send, full) -> {1000000, 3, 200000};
sizes(send, quick) -> {100000, 1, 20000};
sizes(send_10k, full) -> {1000000, 3, 200000};
sizes(send_10k, quick) -> {100000, 1, 20000};
sizes(call, full) -> {100000, 3, 20000};
sizes(call, quick) -> {10000, 1, 2000};
sizes(spawn, full) -> {100000, 3, 20000};
sizes(spawn, quick) -> {10000, 1, 2000};
sizes(idle, full) -> {1000000, 1, 100000};
sizes(idle, quick) -> {100000, 1, 10000};
sizes(restart, full) -> {10000, 1, 2000};
sizes(restart, quick) -> {1000, 1, 200};
sizes(one_for_all, full) -> {1000, 20, 3};
sizes(one_for_all, quick) -> {1000, 3, 1}.

main([Case, Mode]) ->
    logger:set_primary_config(level, none),
    Name = list_to_atom(Case),
    Row = run(Name, sizes(Name, list_to_atom(Mode))),
    io:put_chars(["ROW ", json([{'case', Name}, {impl, erlang} | Row]), "\n"]),
    halt(0).

%% ---- cases --------------------------------------------------------------------------------

run(send, Sizes) ->
    throughput(Sizes, fun send/1);
run(send_10k, Sizes) ->
    throughput(Sizes, fun send_many/1);
run(call, Sizes) ->
    throughput(Sizes, fun call/1);
run(spawn, Sizes) ->
    throughput(Sizes, fun spawn_kill/1);
run(idle, {N, _, Warmup}) ->
    _ = idle(Warmup, cleanup),
    idle(N, keep);
run(restart, {N, _, Warmup}) ->
    _ = restart_samples(Warmup),
    latency_row(restart_samples(N));
run(one_for_all, {Children, Trials, Warmup}) ->
    _ = one_for_all(Children, Warmup),
    Times = lists:sort(one_for_all(Children, Trials)),
    Mean = lists:sum(Times) / length(Times),
    [{ops_per_s, round(Children / (Mean / 1000))}, {children, Children}, {trials, length(Times)},
     {ms, Mean}, {p50_ms, percentile(Times, 50)}, {max_ms, lists:last(Times)}].

%% send: one producer (this process), one consumer counting to N.
send(N) ->
    Self = self(),
    Consumer = spawn(fun() -> consume(N, Self) end),
    Start = now_us(),
    produce(Consumer, 0, N),
    receive {done, Consumer} -> ok end,
    now_us() - Start.

produce(_, N, N) -> ok;
produce(Consumer, I, N) ->
    Consumer ! {msg, I},
    produce(Consumer, I + 1, N).

%% send_10k: the same N messages spread over 10,000 consumers, one after the other in turn.
send_many(N) ->
    Self = self(),
    Per = N div ?MANY_ACTORS,
    Consumers = list_to_tuple([spawn(fun() -> consume(Per, Self) end) || _ <- lists:seq(1, ?MANY_ACTORS)]),
    Start = now_us(),
    produce_many(Consumers, 0, N),
    wait_done(?MANY_ACTORS),
    now_us() - Start.

produce_many(_, N, N) -> ok;
produce_many(Consumers, I, N) ->
    element(I rem ?MANY_ACTORS + 1, Consumers) ! {msg, I},
    produce_many(Consumers, I + 1, N).

wait_done(0) -> ok;
wait_done(K) -> receive {done, _} -> wait_done(K - 1) end.

consume(0, Parent) -> Parent ! {done, self()};
consume(K, Parent) ->
    receive _ -> consume(K - 1, Parent) end.

%% call: sequential gen_server:call round trips to an echo server.
call(N) ->
    {ok, Server} = gen_server:start(?MODULE, echo, []),
    Start = now_us(),
    Sum = call_loop(Server, 0, N, 0),
    Us = now_us() - Start,
    Sum = N * (N - 1) div 2,
    gen_server:stop(Server),
    Us.

call_loop(_, N, N, Sum) -> Sum;
call_loop(Server, I, N, Sum) ->
    {call, Value} = gen_server:call(Server, {call, I}),
    call_loop(Server, I + 1, N, Sum + Value).

%% spawn: spawn an actor and kill it, N times; done once every one of them is gone.
spawn_kill(N) ->
    Before = erlang:system_info(process_count),
    Start = now_us(),
    spawn_kill_loop(N),
    wait_process_count(Before),
    now_us() - Start.

spawn_kill_loop(0) -> ok;
spawn_kill_loop(K) ->
    exit(spawn(fun idle_loop/0), kill),
    spawn_kill_loop(K - 1).

wait_process_count(Target) ->
    case erlang:system_info(process_count) > Target of
        true -> erlang:yield(), wait_process_count(Target);
        false -> ok
    end.

idle_loop() ->
    receive stop -> ok end.

%% idle: N processes waiting in receive; time until all have run, and memory(total) delta / N.
%% Pids are not kept: the warm-up run finds and kills its processes; the VM halts after the timed one.
idle(N, Cleanup) ->
    Self = self(),
    Before = erlang:system_info(process_count),
    garbage_collect(),
    Mem0 = erlang:memory(total),
    Start = now_us(),
    spawn_idle(N),
    %% One scheduler runs processes in spawn order: when this one reports, all have run.
    spawn(fun() -> Self ! ready end),
    receive ready -> ok end,
    Us = now_us() - Start,
    garbage_collect(),
    Mem1 = erlang:memory(total),
    case erlang:system_info(process_count) - Before of
        Alive when Alive >= N -> ok;
        Alive -> error({only_alive, Alive, N})
    end,
    case Cleanup of
        cleanup ->
            [exit(P, kill) || P <- erlang:processes(), is_idle(P)],
            wait_process_count(Before);
        keep -> ok
    end,
    [{ops_per_s, round(N / (Us / 1.0e6))}, {n, N}, {ms, Us / 1000}, {bytes_per_actor, (Mem1 - Mem0) / N}].

is_idle(Pid) ->
    case erlang:process_info(Pid, current_function) of
        {current_function, {?MODULE, idle_loop, 0}} -> true;
        _ -> false
    end.

spawn_idle(0) -> ok;
spawn_idle(K) ->
    spawn(fun idle_loop/0),
    spawn_idle(K - 1).

%% restart: crash the child of a one_for_one supervisor, wait until its successor's init ran.
restart_samples(Total) ->
    restart_batches(Total, []).

restart_batches(0, Acc) -> lists:append(Acc);
restart_batches(Left, Acc) ->
    Count = min(Left, ?RESTART_BATCH),
    restart_batches(Left - Count, [restart_batch(Count) | Acc]).

restart_batch(Count) ->
    Self = self(),
    {ok, Sup} = supervisor:start_link(?MODULE, {sup, one_for_one, [child_spec(0, Self, true)]}),
    First = receive {started, 0, Pid, _} -> Pid end,
    Samples = restart_loop(Count, First, []),
    unlink(Sup),
    gen_server:stop(Sup),
    Samples.

restart_loop(0, _, Acc) -> Acc;
restart_loop(K, Child, Acc) ->
    Start = now_us(),
    exit(Child, x),
    receive {started, 0, Next, At} -> restart_loop(K - 1, Next, [At - Start | Acc]) end.

%% one_for_all: crash the middle one of Children; ms until the last child's init ran.
one_for_all(Children, Trials) ->
    Self = self(),
    Last = Children - 1,
    Specs = [child_spec(Id, Self, Id =:= Last) || Id <- lists:seq(0, Last)],
    {ok, Sup} = supervisor:start_link(?MODULE, {sup, one_for_all, Specs}),
    receive {started, Last, _, _} -> ok end,
    Victim = Children div 2,
    Times = [one_for_all_trial(Sup, Victim, Last) || _ <- lists:seq(1, Trials)],
    unlink(Sup),
    gen_server:stop(Sup),
    Times.

one_for_all_trial(Sup, Victim, Last) ->
    {Victim, Pid, _, _} = lists:keyfind(Victim, 1, supervisor:which_children(Sup)),
    Start = now_us(),
    exit(Pid, x),
    receive {started, Last, _, At} -> (At - Start) / 1000 end.

child_spec(Id, Bench, Report) ->
    #{id => Id,
      start => {gen_server, start_link, [?MODULE, {child, Id, Bench, Report}, []]},
      restart => permanent,
      shutdown => 5000,
      type => worker}.

%% ---- callbacks (gen_server and supervisor) -------------------------------------------------

init({sup, Strategy, Specs}) ->
    {ok, {#{strategy => Strategy, intensity => ?INTENSITY, period => ?PERIOD_S}, Specs}};
init({child, Id, Bench, Report}) ->
    case Report of
        true -> Bench ! {started, Id, self(), now_us()};
        false -> ok
    end,
    {ok, Id};
init(echo) ->
    {ok, echo}.

handle_call(Request, _From, State) -> {reply, Request, State}.
handle_cast(_, State) -> {noreply, State}.
handle_info(_, State) -> {noreply, State}.

%% ---- measurement --------------------------------------------------------------------------

now_us() -> erlang:monotonic_time(nanosecond) / 1000.

%% Warm up once, then the median rate of Rounds timed runs.
throughput({N, Rounds, Warmup}, Body) ->
    _ = Body(Warmup),
    Rates = lists:sort([N / (Body(N) / 1.0e6) || _ <- lists:seq(1, Rounds)]),
    Rate = median(Rates),
    [{ops_per_s, round(Rate)}, {n, N}, {rounds, Rounds}, {us_per_op, 1.0e6 / Rate}].

latency_row(Samples) ->
    Sorted = lists:sort(Samples),
    Mean = lists:sum(Sorted) / length(Sorted),
    [{ops_per_s, round(1.0e6 / Mean)}, {samples, length(Sorted)}, {mean_us, Mean},
     {p50_us, percentile(Sorted, 50)}, {p99_us, percentile(Sorted, 99)}, {max_us, lists:last(Sorted)},
     {batch, ?RESTART_BATCH}].

median(Sorted) ->
    Len = length(Sorted),
    case Len rem 2 of
        1 -> lists:nth(Len div 2 + 1, Sorted);
        0 -> (lists:nth(Len div 2, Sorted) + lists:nth(Len div 2 + 1, Sorted)) / 2
    end.

%% Nearest rank, as cases.ts.
percentile(Sorted, P) ->
    Rank = ceil(P / 100 * length(Sorted)),
    lists:nth(min(length(Sorted), max(1, Rank)), Sorted).

json(Pairs) ->
    ["{", lists:join(",", [["\"", atom_to_list(K), "\":", value(V)] || {K, V} <- Pairs]), "}"].

value(V) when is_integer(V) -> integer_to_list(V);
value(V) when is_float(V) -> float_to_list(V, [{decimals, 3}, compact]);
value(V) when is_atom(V) -> ["\"", atom_to_list(V), "\""].
