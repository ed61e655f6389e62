"""Process endings: how a launcher, shell or scheduler reported that a process ended.

A job killed by a signal prints no traceback of its own: what is left is the line in which
something else reports its end — the shell's "Killed" (or "Getötet", "已杀死": bash prints
glibc's ``strsignal`` text in the user's language), an exit code (137, -9, "exit status 9"),
torchrun's ``exitcode  : -9 (pid: N)``, Slurm's ``oom-kill event(s)``, Kubernetes'
``OOMKilled``, Ray's ``WorkerCrashedError``, a notebook's "kernel appears to have died". This
reader finds those lines in the scanner's pass and turns them into facts:

=========================  =====  =======================================================
``exit_code``              int    the last exit code reported (137, -9, 1), as printed
``exit_signal``            int    the signal that ended the process: 9 from "Killed", SIGKILL,
                                  -9 or 137 (128 + 9); 11 from 139 / -11 / "Segmentation fault"
``exit_signal_name``       str    "SIGKILL", "SIGSEGV", ...
``exit_reporter``          str    who said so: shell, slurm, pbs, lsf, yarn, kubernetes, torchrun,
                                  ray, jupyter, python, deepspeed, accelerate, docker, systemd,
                                  earlyoom, mpi, kernel, gdb, absl, triton, cosmopolitan, unreal,
                                  ide, make, go, time, R
``oom_killed``             bool   a scheduler or the kernel said it killed for memory
``oom_killed_by``          str    which: slurm, pbs, lsf, yarn, kubernetes, docker, systemd,
                                  earlyoom, ray, dask, kernel
``time_limit_hit``         bool   the scheduler cancelled the job at its time limit
``slurm_tasks_killed``     int    srun lines reporting a task ended by SIGKILL ("task 3: Killed")
``node_failed``            bool   the scheduler reported the node failed
``process_ended``          bool   some ending was reported at all
``crashed_after_success``  bool   the ending signal came after a success line: a crash at exit
``crashed_after_exception`` bool  the ending signal came just after an uncaught Python
                                  exception: the interpreter crashed while shutting down
=========================  =====  =======================================================

The shells' own words are taken from their message catalogues: bash prints glibc's
``strsignal()`` (``po/*.po`` of glibc: msgid "Killed", "Segmentation fault", "Aborted",
"Bus error", "Floating point exception", "Illegal instruction"); zsh prints its own
lower-case English names ("zsh: killed", "zsh: segmentation fault"); on macOS, Darwin's
``strsignal()`` adds the number, and bash prints "Killed: 9", "Segmentation fault: 11".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from gpudoctor.facts.spec import FactSpec
from gpudoctor.logs.scanner import CaptureType, Event, PatternHits, PatternSpec
from gpudoctor.logs.structure.tracebacks import SUCCESS_KEY, uncaught_exceptions

_I = CaptureType.INT
_S = CaptureType.STR

SIGNALS: dict[int, str] = {
    1: "SIGHUP",
    2: "SIGINT",
    3: "SIGQUIT",
    4: "SIGILL",
    6: "SIGABRT",
    7: "SIGBUS",
    8: "SIGFPE",
    9: "SIGKILL",
    11: "SIGSEGV",
    13: "SIGPIPE",
    15: "SIGTERM",
}
"""Linux x86-64/arm64 signal numbers of the signals that end training jobs."""

_BY_NAME = {name: number for number, name in SIGNALS.items()}

# glibc strsignal() texts: the English and every translation in glibc's po/*.po that differs
# from it (36 languages, fuzzy entries left out; bminor/glibc 04e750e75b73, 2026-01-20), by signal.
SHELL_WORDS: dict[int, tuple[str, ...]] = {
    9: (
        "Killed", "Забіты", "Безусловно прекъснат", "Matat", "Zabit (SIGKILL)", "Dræbt",
        "Getötet", "Σκοτώθηκε", "Buĉita", "Terminado (killed)", "Tapettu",
        "Processus arrêté", "Matado", "Ubijen", "Kilőve", "Terbunuh", "Ucciso", "強制終了",
        "მოკვტა", "죽었음", "Nutraukta (killed)", "Drept", "Geëlimineerd", "Unicestwiony",
        "Morto", "Omorât", "Убито", "Zabitý", "Pobit", "Убијен", "Dödad",
        "Süreç durduruldu", "Вбито", "Bị buộc kết thúc", "已杀死", "強制結束",
    ),
    11: (
        "Segmentation fault", "Збой сэгмэнтацыі", "Нарушение на разделянето(segfault)",
        "Violació de segment", "Neoprávněný přístup do paměti (SIGSEGV)", "Segmentfejl",
        "Speicherzugriffsfehler", "Σφάλμα κατάτμησης (segmentation fault)",
        "Adres-eraro", "Violación de segmento", "Muistialueen ylitys",
        "Erreur de segmentation", "Fallo de segmento", "Segmentacijska greška",
        "Szegmentálási hiba", "Kerusakan segmentasi", "Errore di segmentazione",
        "სეგმენტაციის შეცდომა", "세그멘테이션 오류", "Segmentavimo klaida", "Minnesegmentsfeil",
        "Segmentatiefout", "Naruszenie ochrony pamięci", "Falta de segmentação",
        "Falha de segmentação", "Eroare de segmentare", "Ошибка сегментирования",
        "Chyba segmentácie", "Napaka segmentacije", "Неуспех сегментације",
        "Segmenteringsfel", "Parçalama arızası", "Помилка адресування", "Lỗi phân đoạn",  # noqa: RUF001
        "段错误", "程式記憶體區段錯誤",
    ),
    6: (
        "Aborted", "Прекъснат", "Avortat", "Neúspěšně ukončen (SIGABRT)",
        "Afbrudt (SIGABRT)", "Abgebrochen", "Ακυρώθηκε", "Abortita", "Abortado",
        "Keskeytetty", "Abandon", "Prekid", "Félbeszakítva", "Dibatalkan", "Annullato",
        "中止", "შეწყვეტილია", "중지됨", "Nutraukta (aborted)", "Avbrutt (SIGABRT)",
        "Afgebroken", "Przerwane", "Abandonare", "Аварийный останов", "Zrušené",
        "Prekinjen", "Прекинуто", "Avbruten (SIGABRT)", "İptal edildi", "Перервано",
        "Bị hủy bỏ", "已中止",
    ),
    7: (
        "Bus error", "Памылка шыны", "Грешка на адресната шина", "Error de bus",
        "Chyba na sběrnici (neplatná adresa) (SIGBUS)", "Busfejl", "Bus-Zugriffsfehler",
        "Σφάλμα στον δίαυλο(bus)", "Bus-eraro", "Error del bus", "Väylävirhe",
        "Erreur du bus", "Erro no bus de datos", "Sabirnička greška", "Busz hiba",
        "Errore di bus", "バスエラー", "მატარებლის შეცდომა", "버스 오류", "Magistralės klaida",
        "Bussfeil", "Busfout", "Błąd szyny", "Erro de bus", "Erro no barramento",
        "Eroare de magistrală de date(bus)", "Ошибка шины", "Chyba na zbernici",
        "Napaka vodila", "Грешка сабирнице", "Bussfel", "Veri yolu hatası",  # noqa: RUF001
        "Помилка каналу обміну даними", "Lỗi bus", "总线错误", "匯流排錯誤",
    ),
    8: (
        "Floating point exception", "Выключэньне плыўной коскі",
        "Изключение при плаваща запетая", "Excepció de coma flotant",
        "Výjimka v pohyblivé řádové čárce (SIGFPE)",
        "Undtagelsestilfælde ved flydende taloperation", "Gleitkomma-Ausnahme",
        "Εξαίρεση κινητής υποδιαστολής", "Glitkomkalkul-eraro",
        "Excepción de coma flotante", "Liukulukupoikkeus",
        "Exception en point flottant", "Excepción de coma frotante",
        "Iznimka (broja) pomičnog zareza", "Lebegőpontos kivétel",
        "Eksepsi titik pecahan", "Eccezione in virgola mobile", "浮動小数点例外",
        "წილადი რიცხვების ანგარიშის შეცდომა", "부동 소수점 예외", "Slankaus kablelio klaida",
        "Unntakstilfelle ved flyttallsoperasjon", "Drijvendekomma-berekeningsfout",
        "Błąd w obliczeniach zmiennoprzecinkowych", "Excepção de vírgula flutuante",
        "Exceção de ponto flutuante", "Excepție de virgulă mobilă",
        "Исключение в операции с плавающей точкой", "Výnimka pohyblivej rádovej čiarky",  # noqa: RUF001
        "Prekoračitev plavajoče vejice", "Изузетак покретног зареза", "Flyttalsfel",
        "Gerçel sayı istisnası", "Помилка обчислень з рухомою комою",  # noqa: RUF001
        "Ngoại lệ dấu chấm động", "浮点异常", "浮點數例外",
    ),
    4: (
        "Illegal instruction", "Недапушчальнае прадпісаньне", "Незаконна инструкция",
        "La instrucció no és permesa", "Nedovolená instrukce (SIGILL)",
        "Ulovlig instruktion (SIGILL)", "Ungültiger Maschinenbefehl",
        "Ακατάλληλη εντολή", "Miskomando", "Instrucción ilegal", "Virheellinen käsky",
        "Instruction non permise", "Instrucción non permitida",
        "Nepropisna instrukcija", "Érvénytelen utasítás", "Instruksi tidak legal",
        "Istruzione non consentita", "არასწორი ინსტრუქცია", "명령어가 잘못됨",
        "Netaisyklinga instrukcija", "Ulovlig instruksjon (SIGILL)",
        "Ongeldige instructie", "Błędna instrukcja", "Instrução ilegal",
        "Instrucțiune ilegală", "Недопустимая инструкция", "Neprípustná inštrukcia",
        "Nedovoljen ukaz", "Неисправна инструкција", "Otillåten instruktion",
        "Yönerge kuraldışı", "Помилкова інструкція", "Chỉ lệnh không hợp lệ", "非法指令",  # noqa: RUF001
        "無效指令",
    ),
}  # fmt: skip

# macOS's strsignal() (Darwin libc) names a signal with its number, and bash on a Mac prints
# that: "./train.sh: line 4: 4242 Killed: 9   python x.py", "Segmentation fault: 11".
BSD_WORDS: dict[int, tuple[str, ...]] = {
    9: ("Killed: 9",),
    11: ("Segmentation fault: 11",),
    6: ("Abort trap: 6",),
    7: ("Bus error: 10",),
    8: ("Floating point exception: 8",),
    4: ("Illegal instruction: 4",),
}

# zsh's own names (Src/signames2.awk): "zsh: killed", "zsh: segmentation fault".
ZSH_WORDS: dict[int, tuple[str, ...]] = {
    9: ("killed",),
    11: ("segmentation fault",),
    6: ("abort",),
    7: ("bus error",),
    8: ("floating point exception",),
    4: ("illegal hardware instruction",),
}

# hydra's "EXIT CODE: N" is a raw wait status in releases that print the box only for a process
# that did not exit, and the exit status in later ones: read as a signal only the values an exit
# status rarely takes (a crash or kill signal, or 128 + one with a core dump), never 1-3.
_HYDRA_SIGNALS = frozenset({4, 6, 7, 8, 9, 11, 15})
_HYDRA_SIGNAL_STATUSES = _HYDRA_SIGNALS | {128 + n for n in _HYDRA_SIGNALS}

# R's words for the signals it catches
R_WORDS: dict[int, tuple[str, ...]] = {
    11: ("segfault",),
    7: ("bus error",),
    4: ("illegal operation",),
}

_WORD_SIGNAL = {
    w.lower(): n
    for n, words in (*SHELL_WORDS.items(), *BSD_WORDS.items(), *ZSH_WORDS.items(), *R_WORDS.items())
    for w in words
}


def _alternation(words: tuple[str, ...]) -> str:
    escaped = sorted({_escape(w) for w in words}, key=len, reverse=True)
    return "|".join(escaped)


def _escape(text: str) -> str:
    return "".join("\\" + c if c in r"\.^$|?*+()[]{}" else c for c in text)


_SHELL = _alternation(
    tuple(w for table in (SHELL_WORDS, BSD_WORDS) for words in table.values() for w in words)
)
_ZSH = _alternation(tuple(w for words in ZSH_WORDS.values() for w in words))
# bash's "%s: line %d: " before a script's job report, in every translation of bash's po/*.po
# (bminor/bash 637f5c8696a6, 2025-12-10): "Zeile 12:", "строка 12:", "12. sor:", zh_CN's
# full-width colon.
_LINE_FORMS = (
    r"vrstica ?\d+:",
    r"ligne ?\d+ ?:",
    r"linio ?\d+ª:",
    r"\d+ ?eilutė:",
    r"строка ?\d+:",
    r"γραμμή ?\d+:",
    r"riadok ?\d+:",
    r"linie ?\d+:",
    r"linje ?\d+:",
    r"řádek ?\d+:",
    r"regel ?\d+:",
    r"рядок ?\d+:",
    r"\d+\. ?sor:",
    r"Zeile ?\d+:",
    r"línia ?\d+:",
    r"redak ?\d+:",
    r"linha ?\d+:",
    r"linia ?\d+:",
    r"baris ?\d+:",
    r"satır ?\d+:",  # noqa: RUF001
    r"línea ?\d+:",
    r"riga ?\d+:",
    r"liña ?\d+:",
    r"ხაზი ?\d+:",
    r"líne ?\d+:",
    r"第 ?\d+ ?行：",  # noqa: RUF001
    r"line ?\d+:",
    r"第 ?\d+ ?列：",  # noqa: RUF001
    r"dòng ?\d+:",
    r"rida ?\d+:",
    r"rivi ?\d+:",
    r"rad ?\d+:",
    r"ред ?\d+:",
    r"줄 ?\d+:",
    r"\d+ ?行:",
)
_LINE = "|".join(_LINE_FORMS)
# "(core dumped)", "(Speicherabzug geschrieben)", and zh_CN's in full-width parentheses (no
# multi-byte character in a class: the scanner matches bytes)
_CORE = r"(?:\s*(?:\(|（)[^\n]{1,60}?(?:\)|）))?"  # noqa: RUF001
_SIG = r"(?P<signame>SIG[A-Z]{2,6})"
# bash's "(core dumped)" after the signal's name, in every translation of its po/*.po (bminor/bash
# 637f5c8696a6, 2025-12-10; fuzzy entries left out), without the parentheses
CORE_DUMPED_WORDS: tuple[str, ...] = (
    "core dumped", "Speicherabzug geschrieben", "`core' generado", "bol uložený výpis pamäte",
    "core didump", "core dump creato", "core dumped [ispis stanja memorije je spremljen]",
    "core dumped [obraz paměti uložen]", "core készült", "core salvestatud",
    "cuimhne dumpáilte", "geheugendump gemaakt", "imagem do núcleo gravada",
    "ispis memorije je stvoren!", "izpis jedra", "kjerne lagret i fil", "luotiin core-tiedosto",
    "minnesutskrift skapad", "nekropsio elŝutita", "núcleo despejado", "s'ha bolcat la memòria",
    "smed kerne", "xuất ra core", "zrzut pamięci", "«core» generado", "«core» xerado",
    "çekirdek döküldü", "збережено знімок оперативної пам’яті", "образ памяти сброшен на диск",  # noqa: RUF001
    "паметта е разтоварена", "језгрени избачај", "ბირთვი ჩაწერილია", "コアダンプ", "核心已傾印",  # noqa: RUF001
    "核心已转储",
)  # fmt: skip
_CORE_DUMPED = r"(?:\(|（)(?:" + _alternation(CORE_DUMPED_WORDS) + r")(?:\)|）)"  # noqa: RUF001

# Each pattern key names its reporter after the second slash: facts/end_<reporter>_<what>.
PATTERNS: tuple[PatternSpec, ...] = (
    # bash alone on a line (or glued to a progress bar): "Killed", "Getötet", "段错误 (核心已转储)"
    PatternSpec(
        "facts/end_shell_word",
        r"(?:^|[\]\s>`'\"|$#*])(?P<word>" + _SHELL + r")" + _CORE + r"[\s'\"`*]*$",
    ),
    # the same report glued to the end of the program's last line, which had no newline of its
    # own ("...libbz2.so.1.0Abandon (core dumped)"): only with bash's core-dump note, which no
    # program's own sentence ends with
    PatternSpec(
        "facts/end_shell_glued",
        r"(?P<word>" + _SHELL + r")\s*" + _CORE_DUMPED + r"[\s'\"`*]*$",
    ),
    # ... or glued to a progress bar the program left without a newline ("... ETA: 2621sKilled",
    # "... 3.2it/s]已杀死"): on a line that reads as a progress report (pasted, often with a
    # full stop after it: "... 1.39s/it]Killed.")
    PatternSpec(
        "facts/end_shell_progress",
        r"(?:\bETA\b|\bit/s\b|\bs/it\b|\btask/s\b|%\|)[^\n]*?[\d\]|s](?P<word>"
        + _SHELL
        + r")"
        + _CORE
        + r"\.?[\s'\"`*]*$",
    ),
    # bash reporting a script line or a job: "./run.sh: line 9: 4242 Killed   python x.py"
    # ("./run.sh: Zeile 9: 4242 Getötet  python x.py"),
    # "[1]+  Killed    python x.py"; zsh: "zsh: killed     python x.py"
    PatternSpec(
        "facts/end_shell_job",
        r"(?:(?:"
        + _LINE
        + r")\s+\d+\s+|^\[\d+\][+-]?\s+(?:\d+\s+)?)(?P<word>"
        + _SHELL
        + r")"
        + _CORE
        + r"\s+\S",
    ),
    # (the job line can follow a progress bar the terminal had redrawn with "\r": "... 1.84s/it][1]
    # 14875 killed     python main.py" once pasted)
    PatternSpec(
        "facts/end_shell_zsh",
        r"(?:^|\d(?:s/it|it/s)\])(?:zsh: |\[\d+\][+-]?\s+(?:\d+\s+)?)(?P<word>"
        + _ZSH
        + r")"
        + _CORE
        + r"\s+\S",
    ),
    # faulthandler: "Fatal Python error: Segmentation fault"
    PatternSpec(
        "facts/end_python_fatal",
        r"Fatal Python error: (?P<word>Segmentation fault|Aborted|Bus error|Floating point "
        r"exception|Illegal instruction)",
    ),
    # torchrun / torchelastic: "exitcode  : -9 (pid: 1234)", "failed (exitcode: -9) local_rank",
    # "Signal 9 (SIGKILL) received by PID 1234"
    PatternSpec(
        "facts/end_torchrun_code",
        r"(?:^\s*exitcode\s*:\s*(?P<code>-?\d+) \(pid: \d+\)|"
        r"failed \(exitcode: (?P<code2>-?\d+)\))",
        captures={"code": _I, "code2": _I},
    ),
    PatternSpec(
        "facts/end_torchrun_signal",
        r"Signal (?P<signum>\d+) \(" + _SIG + r"\) received by PID \d+",
        captures={"signum": _I},
    ),
    # DeepSpeed launcher: "exits with return code = -9"
    PatternSpec(
        "facts/end_deepspeed_code",
        r"exits with return code = (?P<code>-?\d+)",
        captures={"code": _I},
    ),
    # accelerate / subprocess: "returned non-zero exit status 1.", "died with <Signals.SIGKILL: 9>"
    PatternSpec(
        "facts/end_accelerate_code",
        r"returned non-zero exit status (?P<code>-?\d+)",
        captures={"code": _I},
    ),
    PatternSpec(
        "facts/end_python_signals",
        r"<Signals\." + _SIG + r": (?P<signum>\d+)>",
        captures={"signum": _I},
    ),
    # R's signal handler (src/main/main.c), before its traceback: " *** caught segfault ***",
    # "*** caught bus error ***", "*** caught illegal operation ***" (then "address 0x...,
    # cause 'illegal opcode'"), as R, reticulate (Python inside R) and Rscript print it.
    PatternSpec(
        "facts/end_R_signal",
        r"^[\s`'\"]*\*\*\* caught (?P<word>segfault|bus error|illegal operation) \*\*\*",
        captures={"word": _S},
    ),
    # Go programs (ollama, the container toolkit, Kubernetes tools) report a child's end with
    # os/exec's ExitError: "signal: killed", "signal: segmentation fault", "exit status 2".
    PatternSpec(
        "facts/end_go_signal",
        r"\bsignal: (?P<word>killed|segmentation fault|aborted|bus error|"
        r"floating point exception|illegal instruction)\b",
        captures={"word": _S},
    ),
    # multiprocessing / torch.multiprocessing.spawn: "exited with exitcode -9",
    # "process 1 terminated with signal SIGKILL", "terminated with exit code 1", "returncode=-11"
    PatternSpec(
        "facts/end_python_mp",
        r"(?:exited with exitcode (?P<code>-?\d+)|process \d+ terminated with (?:exit code "
        r"(?P<code2>-?\d+)|signal " + _SIG + r")|\breturncode[=:]\s*(?P<code3>-?\d+))",
        captures={"code": _I, "code2": _I, "code3": _I},
    ),
    # Slurm: "slurmstepd: error: Detected 1 oom_kill event(s)", "srun: error: node7: task 0:
    # Out Of Memory", "... task 3: Killed", "... tasks 0-3: Exited with exit code 1",
    # "*** JOB 42 ON node7 CANCELLED AT 2024-01-01T00:00:00 DUE TO TIME LIMIT ***".
    # "Exceeded step memory limit at some point" is printed at the end of a step whose cgroup
    # reached its limit (page cache counts): alone it does not say anything was killed.
    PatternSpec(
        "facts/end_slurm_oom",
        r"(?:Detected \d+ oom[-_]kill events?|Exceeded (?:job|step) memory limit"
        r"(?P<peak> at some point)?|"
        r"srun: error: \S+: tasks? [\d,-]+: Out Of Memory|\bState=OUT_OF_MEMORY\b|"
        r"\bOUT_OF_MEMORY\b)",
        captures={"peak": _S},
    ),
    PatternSpec(
        "facts/end_slurm_task",
        r"srun: error: \S+: tasks? [\d,-]+: (?:(?P<word>Killed|Segmentation fault|Aborted|"
        r"Bus error|Floating point exception|Illegal instruction)|Exited with exit code "
        r"(?P<code>\d+))",
        captures={"code": _I},
    ),
    PatternSpec("facts/end_slurm_time", r"CANCELLED AT \S+ DUE TO TIME LIMIT"),
    # PBS / Torque: "job 3132467 exceeded MEM usage hard limit (2528 > 1126)",
    # "PBS: job killed: mem 9437184kb exceeded limit 8388608kb"
    PatternSpec(
        "facts/end_pbs_oom",
        r"\bexceeded MEM usage hard limit\b|PBS: job killed: (?:p?mem|vmem) \d+\w* exceeded limit",
    ),
    # IBM LSF's exit reason: "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit."
    PatternSpec("facts/end_lsf_oom", r"\bTERM_MEMLIMIT: job killed after reaching LSF memory"),
    # Hadoop YARN (Spark with RAPIDS): "Container killed by YARN for exceeding physical memory
    # limits. 10.5 GB of 10 GB physical memory used."
    PatternSpec(
        "facts/end_yarn_oom",
        r"Container killed by YARN for exceeding (?:physical|virtual) memory limits",
    ),
    PatternSpec("facts/end_slurm_node", r"DUE TO NODE FAIL(?:URE)?|\bNODE_FAIL\b"),
    # Kubernetes: "Reason: OOMKilled", "Exit Code: 137", "Reason: Evicted",
    # "The node was low on resource: memory.", "The node had condition: [MemoryPressure]."
    PatternSpec(
        "facts/end_kubernetes_oom",
        r"\bOOMKilled\b|The node was low on resource: memory|"
        r"The node had condition: \[[^\]]*\bMemoryPressure\b",
    ),
    # runc (under Docker, containerd, Kubernetes): "container init was OOM-killed (memory
    # limit too low?)" when the container's memory limit is hit while it starts.
    PatternSpec("facts/end_docker_oom", r"container init was OOM-killed"),
    PatternSpec(
        "facts/end_kubernetes_code",
        r"^\s*Exit Code:\s*(?P<code>\d+)\s*$",
        captures={"code": _I},
    ),
    PatternSpec("facts/end_kubernetes_evicted", r"\bReason:\s*Evicted\b"),
    # Ray: "ray.exceptions.WorkerCrashedError", "worker died unexpectedly", its memory monitor
    PatternSpec(
        "facts/end_ray_crash",
        r"ray\.exceptions\.(?:WorkerCrashedError|NodeDiedError|ActorDiedError|RayActorError)|"
        r"[Ww]orker died unexpectedly",
    ),
    PatternSpec(
        "facts/end_ray_oom",
        r"ray\.exceptions\.OutOfMemoryError|killed due to memory pressure \(OOM\)|"
        r"Ray killed this worker .* because the node was running low on memory",
    ),
    # Dask's nanny restarting a worker at its memory limit (distributed/nanny.py): "Worker
    # exceeded 95% memory budget. Restarting", later "Worker tcp://10.0.0.5:40111 (pid=812)
    # exceeded 95% memory budget. Restarting..."
    PatternSpec("facts/end_dask_oom", r"\bexceeded \d+% memory budget\. Restarting"),
    # Jupyter: "The kernel appears to have died", "Kernel Restarting", "KernelDied"
    PatternSpec(
        "facts/end_jupyter_died",
        r"The kernel(?: for \S+)? appears to have died|Kernel Restarting|\bKernelDied\b|"
        r"Kernel died|kernel process died",
    ),
    # The kernel's OOM killer: "Out of memory: Killed process 4242 (python)", "oom-kill:"
    PatternSpec(
        "facts/end_kernel_oom",
        r"(?:Out of memory|Memory cgroup out of memory): ?Kill(?:ed)? process \d+|"
        r"oom-kill:constraint=",
    ),
    # mpirun: "... exited on signal 9 (Killed)."
    PatternSpec(
        "facts/end_mpi_signal",
        r"exited on signal (?P<signum>\d+) \(",
        captures={"signum": _I},
    ),
    # MPICH's and Intel MPI's launcher (hydra), in its "BAD TERMINATION OF ONE OF YOUR
    # APPLICATION PROCESSES" box, for a process that did not exit: "=   KILLED BY SIGNAL: 9
    # (Killed)", or in older releases "=   EXIT CODE: 9", the raw wait status (the signal, plus
    # 128 when a core was dumped: 139 is SIGSEGV); later ones print an exit status there.
    PatternSpec(
        "facts/end_mpi_hydra",
        r"^\s*=\s+(?:EXIT CODE: (?P<waitstatus>\d{1,3})\s*$|"
        r"KILLED BY SIGNAL: (?P<signum>\d{1,2})\b)",
        captures={"waitstatus": _I, "signum": _I},
    ),
    # MPI_Abort: MPICH "Abort(-1) (rank 0 in comm 0): <reason>"; Open MPI "MPI_ABORT was
    # invoked on rank 3 in communicator MPI_COMM_WORLD" with "with errorcode 1." on its own
    # line. The number is the program's error code, never a signal.
    PatternSpec(
        "facts/end_mpi_abort",
        r"\bAbort\((?P<errorcode>-?\d+)\) \(rank \d+ in comm \d+\)|"
        r"MPI_ABORT was invoked on rank \d+ in communicator \S+(?: with errorcode "
        r"(?P<errorcode2>-?\d+))?|^\s*with errorcode (?P<errorcode3>-?\d+)\.\s*$",
        captures={"errorcode": _I, "errorcode2": _I, "errorcode3": _I},
    ),
    # systemd: "Main process exited, code=killed, status=9/KILL", "status=1/FAILURE"
    PatternSpec(
        "facts/end_systemd_status",
        r"code=(?:exited|killed|dumped), status=(?P<status>\d+)/(?P<statname>[A-Z]+)",
        captures={"status": _I},
    ),
    # systemd's own OOM reports (unit.c, service.c): "ollama.service: A process of this unit
    # has been killed by the OOM killer.", "Failed with result 'oom-kill'."
    PatternSpec(
        "facts/end_systemd_oom",
        r"A process of this unit has been killed by the OOM killer|"
        r"Failed with result '(?:oom-kill|oom_kill)'|"
        # systemd-oomd: "Killed /user.slice/.../app.scope due to memory pressure for ..."
        r"\bKilled \S+ due to memory (?:pressure|used)\b",
    ),
    # earlyoom (a user-space OOM killer, the default on some desktops): "low memory! at or
    # below SIGTERM limits: mem 3.00%, ...", "sending SIGTERM to process 4242 uid 1000
    # "python3": oom_score 1280, VmRSS 29931 MiB"
    PatternSpec(
        "facts/end_earlyoom_oom",
        r"\bearlyoom\b.*?(?:sending SIG(?:TERM|KILL) to process \d+|low memory! at or below)|"
        r"^sending SIG(?:TERM|KILL) to process \d+ uid \d+ \S+: oom_score \d+",
    ),
    # docker ps: "Exited (137) 5 minutes ago"
    PatternSpec(
        "facts/end_docker_code",
        r"\bExited \((?P<code>\d+)\) ",
        captures={"code": _I},
    ),
    # GNU make: "make: *** [Makefile:12: train] Error 137", "make[1]: *** [all] Error 2"
    PatternSpec(
        "facts/end_make_code",
        r"\bmake(?:\[\d+\])?: \*\*\* \[[^\]]*\] Error (?P<code>\d{1,3})\b",
        captures={"code": _I},
    ),
    # GNU time (/usr/bin/time): "Command exited with non-zero status 1"
    PatternSpec(
        "facts/end_time_code",
        r"^\s*Command exited with non-zero status (?P<code>\d{1,3})\s*$",
        captures={"code": _I},
    ),
    # Abseil's failure signal handler (TensorFlow, JAX/XLA): "*** SIGSEGV received at
    # time=1700000000 on cpu 13 ***"
    PatternSpec(
        "facts/end_absl_signal",
        r"^\*\*\* " + _SIG + r" received at time=\d+",
    ),
    # Cosmopolitan libc's crash report (llamafile, whisperfile and other Actually Portable
    # Executables): "error: Uncaught SIGSEGV (SEGV_MAPERR) at 0x28 on host pid 812 tid 813"
    PatternSpec(
        "facts/end_cosmopolitan_signal",
        r"\berror: Uncaught " + _SIG + r" \(",
    ),
    # Triton Inference Server's signal handler, before its backtrace: "Signal (11) received."
    PatternSpec(
        "facts/end_triton_signal",
        r"^\s*(?:\S+ )?Signal \((?P<signum>\d+)\) received\.",
        captures={"signum": _I},
    ),
    # Unreal Engine's crash handler (simulators built on it: CARLA, AirSim, Holodeck), before
    # its call stack: "Signal 11 caught.", "Unhandled Exception: SIGSEGV: invalid attempt to
    # write memory at address 0x0000000000000000"
    PatternSpec(
        "facts/end_unreal_signal",
        r"\bUnhandled Exception: " + _SIG + r": |^\s*Signal (?P<signum>\d{1,2}) caught\.\s*$",
        captures={"signum": _I},
    ),
    # gdb: 'Thread 1 "python" received signal SIGSEGV, Segmentation fault.'
    PatternSpec(
        "facts/end_gdb_signal",
        r"(?:^Program|^Thread \d+ \"[^\"]*\") received signal " + _SIG + r", ",
    ),
    # IDEs and wrappers: "Process finished with exit code 137 (interrupted by signal 9: SIGKILL)"
    PatternSpec(
        "facts/end_ide_code",
        r"Process finished with exit code (?P<code>-?\d+)(?: \(interrupted by signal "
        r"(?P<signum>\d+): " + _SIG + r"\))?",
        captures={"code": _I, "signum": _I},
    ),
    # Anything else: "exit code: 139", "exit status 9", "exit_code=1", "exited with code 1",
    # Flyte's "terminated with exit code (137)", "error code -9", "killed by signal 9", "Command
    # terminated by signal 9", TGI's launcher: "Shard process was signaled to shutdown with
    # signal 9", "exited with signal 11"
    PatternSpec(
        "facts/end_process_code",
        r"(?i)\bexit(?:ed)?(?: with)?[ _-]?(?:code|status)\s*[:=]?\s*\(?(?P<code>-?\d{1,4})\b|"
        r"\berror code (?P<code2>-\d{1,3})\b",
        captures={"code": _I, "code2": _I},
    ),
    PatternSpec(
        "facts/end_process_signal",
        r"(?i)\b(?:killed|terminated|signall?ed|died|exited|crashed|stopped)\b[\w ]{0,30}? "
        r"(?:by|with|on|from) signal (?P<signum>\d{1,2})\b",
        captures={"signum": _I},
    ),
)

FACTS: tuple[FactSpec, ...] = (
    FactSpec("exit_code", "int", "-", "log structure",
             "The last exit code a launcher, shell or scheduler reported (137, -9, 1)."),
    FactSpec("exit_signal", "int", "-", "log structure",
             "The signal that ended the process: 9 from 'Killed', SIGKILL, -9 or 137 (128 + 9)."),
    FactSpec("exit_signal_name", "str", "-", "log structure",
             "The name of exit_signal: SIGKILL, SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL..."),
    FactSpec("exit_reporter", "str", "-", "log structure",
             "Who reported the ending: shell, slurm, pbs, lsf, yarn, kubernetes, torchrun, ray, "
             "jupyter, python, deepspeed, accelerate, docker, systemd, earlyoom, mpi, kernel, "
             "gdb, absl, triton, cosmopolitan, unreal, ide, make, go, time, R, process."),
    FactSpec("oom_killed", "bool", "-", "log structure",
             "A scheduler, container runtime or the kernel said it killed the job for memory."),
    FactSpec("oom_killed_by", "str", "-", "log structure",
             "Who said it killed for memory: slurm, pbs, lsf, yarn, kubernetes, docker, systemd, "
             "earlyoom, ray, dask or kernel."),
    FactSpec("oom_limit_reached_only", "bool", "-", "log structure",
             "Every memory message is Slurm's 'Exceeded step memory limit at some point': the "
             "step's cgroup reached its limit (page cache counts), no kill was reported."),
    FactSpec("time_limit_hit", "bool", "-", "log structure",
             "The scheduler cancelled the job at its time limit."),
    FactSpec("slurm_tasks_killed", "int", "-", "log structure",
             "srun lines reporting a task ended by SIGKILL ('srun: error: node7: task 3: "
             "Killed'); Slurm reports its own memory kills as 'Out Of Memory' instead."),
    FactSpec("node_failed", "bool", "-", "log structure",
             "The scheduler reported that the job's node failed."),
    FactSpec("process_ended", "bool", "-", "log structure",
             "Some launcher, shell or scheduler reported how a process ended."),
    FactSpec("crashed_after_success", "bool", "-", "log structure",
             "The signal that ended the process came after a success line of the same input "
             "('Training complete', 'Finished optimization', 'Done'): the job had finished its "
             "work and crashed while exiting."),
    FactSpec("crashed_after_exception", "bool", "-", "log structure",
             "The signal that ended the process came within a few lines after an uncaught "
             "Python exception of the same input (a traceback, not an 'Exception ignored' "
             "report, nor a launcher's report of a child's end): the interpreter crashed while "
             "shutting down after the error."),
)  # fmt: skip

CRASH_AFTER_EXCEPTION_LINES = 60
"""How far after an uncaught exception a crash signal still reads as the interpreter's
shutdown: its destructors' "Exception ignored" reports and a library's teardown messages."""

# Exceptions that report a child process's end, printed before the table or line that gives
# its signal: torchrun's ChildFailedError, mp.spawn's ProcessExitedException, subprocess's
# CalledProcessError, concurrent.futures' BrokenProcessPool, Ray's dead workers and actors.
_REPORTS_A_CHILD = re.compile(
    r"ChildFailedError|ProcessExitedException|ProcessRaisedException|CalledProcessError|"
    r"BrokenProcessPool|WorkerCrashedError|ActorDiedError|RayActorError"
)


def fact_names() -> frozenset[str]:
    """Every fact name this reader can produce."""
    return frozenset(spec.name for spec in FACTS)


def signal_of_code(code: int) -> int | None:
    """The signal an exit code stands for: -N (Python's returncode) or 128 + N (shells,
    containers); ``None`` for an ordinary exit status."""
    if code < 0 and -code in SIGNALS:
        return -code
    if 128 < code <= 128 + 31 and code - 128 in SIGNALS:
        return code - 128
    return None


_GENERIC = "facts/end_process_"
_OOM_KEYS = frozenset(
    (
        "facts/end_slurm_oom",
        "facts/end_kubernetes_oom",
        "facts/end_docker_oom",
        "facts/end_systemd_oom",
        "facts/end_earlyoom_oom",
        "facts/end_pbs_oom",
        "facts/end_lsf_oom",
        "facts/end_yarn_oom",
        "facts/end_ray_oom",
        "facts/end_dask_oom",
        "facts/end_kernel_oom",
    )
)


def _reporter(key: str) -> str:
    return key.removeprefix("facts/end_").split("_", 1)[0]


def _event_ending(event: Event) -> tuple[int | None, int | None]:
    """(exit code, signal) one event states, either may be ``None``."""
    caps = event.captures
    errorcode = next(
        (v for k in ("errorcode", "errorcode2", "errorcode3") if isinstance(v := caps.get(k), int)),
        None,
    )
    if errorcode is not None:  # MPI_Abort's code is the program's, not a signal's
        return errorcode, None
    code = next((v for k in ("code", "code2", "code3") if isinstance(v := caps.get(k), int)), None)
    signal: int | None = None
    signum = caps.get("signum")
    if isinstance(signum, int) and signum in SIGNALS:
        signal = signum
    name = caps.get("signame")
    if signal is None and isinstance(name, str):
        signal = _BY_NAME.get(name)
    word = caps.get("word")
    if signal is None and isinstance(word, str):
        signal = _WORD_SIGNAL.get(word.strip().lower())
    waitstatus = caps.get("waitstatus")
    if isinstance(waitstatus, int):
        code = waitstatus
        if signal is None and waitstatus in _HYDRA_SIGNAL_STATUSES:
            signal = waitstatus & 0x7F
    status, statname = caps.get("status"), caps.get("statname")
    if isinstance(status, int):
        if statname == "FAILURE" or statname is None:
            code = status
        elif status in SIGNALS:
            signal = status
    if signal is None and code is not None:
        signal = signal_of_code(code)
    return code, signal


def facts(
    hits: Mapping[str, PatternHits], input_lines: Sequence[int | None] = ()
) -> dict[str, object]:
    """Facts about how the process ended (see the module doc for each name)."""
    # On one line, the generic patterns' events come first so that a specific reporter wins.
    events = sorted(
        (e for spec in PATTERNS if (h := hits.get(spec.key)) for e in h.events()),
        key=lambda e: (e.order, not e.key.startswith(_GENERIC)),
    )
    if not events:
        return {}
    found: dict[str, object] = {"process_ended": True}
    code_at: Event | None = None
    signal_at: Event | None = None
    for event in events:
        code, signal = _event_ending(event)
        if code is not None:
            found["exit_code"] = code
            code_at = event
        if signal is not None:
            found["exit_signal"] = signal
            found["exit_signal_name"] = SIGNALS[signal]
            signal_at = event
    reporter_event = signal_at or code_at or events[-1]
    found["exit_reporter"] = _reporter(reporter_event.key)
    keys = {e.key for e in events}
    oom = [e for e in events if e.key in _OOM_KEYS]
    found["oom_killed"] = bool(oom)
    if oom:
        found["oom_killed_by"] = _reporter(oom[-1].key)
        found["oom_limit_reached_only"] = all(e.captures.get("peak") for e in oom)
    found["time_limit_hit"] = "facts/end_slurm_time" in keys
    killed = [e for e in events if e.key == "facts/end_slurm_task" and e.captures.get("word")]
    if killed:
        found["slurm_tasks_killed"] = sum(e.captures.get("word") == "Killed" for e in killed)
    found["node_failed"] = "facts/end_slurm_node" in keys
    if signal_at is not None:
        found["crashed_after_success"] = _after_success(hits, signal_at)
        found["crashed_after_exception"] = _after_exception(hits, signal_at)
    return found


def _after_success(hits: Mapping[str, PatternHits], ending: Event) -> bool:
    """Whether a success line of the same input came before ``ending``."""
    success = hits.get(SUCCESS_KEY)
    if success is None:
        return False
    source = ending.order[0]
    return any(e.order[0] == source and e.order < ending.order for e in success.events())


def _after_exception(hits: Mapping[str, PatternHits], ending: Event) -> bool:
    """Whether an uncaught exception of the same input came shortly before ``ending``."""
    source, line = ending.order
    return any(
        e.order[0] == source
        and 0 < line - e.order[1] <= CRASH_AFTER_EXCEPTION_LINES
        and not _REPORTS_A_CHILD.search(str(e.captures.get("type", "")))
        for e in uncaught_exceptions(hits)
    )
