# cmake -P: run_engine_table.py (issue 15 item 7) at a tiny size on glibc (no preload) and on
# lethe-linked (lethe-stress itself), two repetitions, and checks what it prints: the header, one
# row per allocator in the table's format (glibc, the only peer, is its own best: ratios 1.00), the
# verdict lines of both targets for lethe-linked. Needs PYTHON, SCRIPT, STRESS_DIR, OUT.
execute_process(
  COMMAND ${PYTHON} ${SCRIPT} --stress-dir ${STRESS_DIR} --allocators glibc,lethe-linked --reps 2
          --page-count 2 --cycles 1 --windows 2 --idle 20 --out ${OUT}
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "run_engine_table.py exited ${status}\n${out}${err}")
endif()
set(number "[0-9]+\\.[0-9]+")
set(peer_cell " +${number} +1\\.00")  # a value and its ratio to itself, the best peer
set(cell " +${number} +${number}")
set(verdict "${number}x the best peer, (met|MISSED)")
set(checks
  "2 pages x 1 cycles through 2 windows, 20 s idle; medians of 2 interleaved repetitions"
  "\nallocator +terminal RSS MB +x best +peak RSS MB +x best +wall s +x best +CPU s +x best"
  " +faults k +x best +spread\n"
  "\nglibc${peer_cell}${peer_cell}${peer_cell}${peer_cell}${peer_cell} +[0-9]+%\n"
  "\nlethe-linked${cell}${cell}${cell}${cell}${cell} +[0-9]+%\n"
  "\ntarget lethe-linked, terminal RSS the lowest: ${verdict}\n"
  "\ntarget lethe-linked, wall time <= 1\\.05x the best peer's: ${verdict}")
foreach(pattern ${checks})
  if(NOT out MATCHES "${pattern}")
    message(FATAL_ERROR "the table lacks /${pattern}/:\n${out}${err}")
  endif()
endforeach()
# Every repetition ran every allocator once: its samples are where the children wrote them.
foreach(name glibc lethe-linked)
  if(NOT EXISTS ${OUT}/${name}/samples-lethe.csv)
    message(FATAL_ERROR "no samples from the ${name} run in ${OUT}/${name}")
  endif()
endforeach()
