# frozen_string_literal: true
#
# rperf/capture.rb: what the Rack, Sidekiq and ActiveJob helpers share.
#
# Each request or job is one capture (Rperf.capture_begin/capture_end, in
# rperf's C side): its time samples are remembered while it runs, and at
# the end they get their labels (endpoint or job, status) retroactively, so
# a label known only once the app has routed the request (Sinatra's and
# Rails' route patterns) or answered it (the status class) still covers
# all of its samples.  A request or job slower than `slow:` seconds has
# its samples written to a file of its own in `dir:`; the directory keeps
# the newest `keep:` of them.
#
# Nothing here is needed by rperf itself: these files are loaded only when
# an app requires them (or names Rperf::Rack and friends).

module Rperf
  # The slow-capture files of one directory: names, the sequence number,
  # writing and pruning.  One per middleware instance; the sequence and the
  # pruning are guarded by a lock shared by every instance of the process.
  class SlowLog
    # Our file names: UTC start time, pid, sequence number.  They sort by
    # time as plain strings (ls, Dir.children.sort), and pruning deletes
    # only names of this shape, never a file the user put there.
    NAME = /\A\d{8}T\d{6}\.\d{6}Z-\d+-\d+\.pb\.gz\z/

    LOCK = Mutex.new
    @seq = 0
    class << self
      # The next sequence number of this process.
      def next_seq
        LOCK.synchronize { @seq += 1 }
      end
    end

    # Whether this rperf has captures (an older binary, or a Rperf module
    # of something else, has not): without them the helpers pass through.
    def self.captures?
      Rperf.respond_to?(:capture_begin) && Rperf.respond_to?(:capture_end)
    end

    attr_reader :slow, :dir, :keep

    def initialize(owner, slow: nil, dir: nil, keep: 100)
      @owner = owner
      if slow.nil?
        raise ArgumentError, "#{owner}: dir: is given but slow: is not (slow: SECONDS says which ones get a file of their own)" if dir
        @slow = nil
        return
      end
      unless slow.is_a?(Numeric) && slow >= 0
        raise ArgumentError, "#{owner}: slow: must be a number of seconds >= 0, not #{slow.inspect}"
      end
      raise ArgumentError, "#{owner}: slow: needs dir: (where the slow profiles go)" if dir.nil? || dir.to_s.empty?
      unless keep.is_a?(Integer) && keep >= 1
        raise ArgumentError, "#{owner}: keep: must be an Integer >= 1, not #{keep.inspect}"
      end
      @slow = slow.to_f
      @dir = File.expand_path(dir.to_s)
      @keep = keep
      @warned = false
    end

    # Whether a capture of SECONDS gets its own file.
    def slow?(seconds)
      !@slow.nil? && seconds >= @slow
    end

    # End capture TOKEN with LABELS; when it took SECONDS >= slow:, write
    # its samples to a new file with META.  Returns the path written or nil.
    # A file that cannot be written is reported once on $stderr (ERRORS
    # when given) and the request goes on: the app must not fail for it.
    def finish(token, labels, seconds, meta, errors = nil)
      unless slow?(seconds)
        Rperf.capture_end(token, labels: labels)
        return nil
      end

      path = new_path(Time.now - seconds)
      begin
        ensure_dir
        written = Rperf.capture_end(token, labels: labels, output: path, meta: meta)
      rescue IOError, SystemCallError => e
        warn_once(errors, "cannot write #{path}: #{e.message}")
        # capture_end raised after the capture ended or before: in the
        # second case end it now, without the file.
        begin
          Rperf.capture_end(token, labels: labels)
        rescue ArgumentError
          nil
        end
        return nil
      end
      prune if written
      written
    end

    private

    def new_path(start)
      t = start.utc
      format("%s/%s.%06dZ-%d-%06d.pb.gz", @dir, t.strftime("%Y%m%dT%H%M%S"), t.usec,
             Process.pid, SlowLog.next_seq)
    end

    def ensure_dir
      return if @made && File.directory?(@dir)

      begin
        Dir.mkdir(@dir, 0o755)
      rescue Errno::EEXIST
        nil
      rescue Errno::ENOENT
        require "fileutils"
        FileUtils.mkdir_p(@dir)
      end
      @made = true
    end

    # Delete our oldest files beyond keep:.  Several workers may prune the
    # same directory at once: a file already gone is no error.
    def prune
      ours = Dir.children(@dir).grep(NAME)
      return if ours.size <= @keep

      ours.sort!
      ours.first(ours.size - @keep).each do |name|
        File.unlink(File.join(@dir, name))
      rescue Errno::ENOENT
        nil
      end
    rescue SystemCallError
      nil
    end

    def warn_once(errors, message)
      return if @warned

      @warned = true
      text = "rperf: #{@owner}: #{message} (further errors not shown)\n"
      if errors.respond_to?(:write)
        errors.write(text)
      else
        $stderr.write(text)
      end
    end
  end

  # Helpers of the job middlewares (Sidekiq, ActiveJob): one job, one
  # capture labelled job=CLASS, queue=QUEUE and job_status=ok|error (not
  # "status": a job performed inline in a request keeps the request's).
  module JobCapture
    module_function

    def clock
      Process.clock_gettime(Process::CLOCK_MONOTONIC)
    end

    # Run the block as one job of class NAME from QUEUE.
    def run(log, name, queue)
      token = Rperf.capture_begin
      unless token
        # Not sampling time (not running, or -m alloc): labels still
        # reach allocation samples; nothing to write.
        return yield unless Rperf.running?

        return Rperf.label(job: name, queue: queue) { yield }
      end
      # With --timeline the job is a mark on its thread (nil without).
      mark = Rperf.mark_start(name) if Rperf.respond_to?(:mark_start)
      t0 = clock
      ok = false
      begin
        # With --alloc, allocation samples get the job's labels as they
        # happen (time samples get them at the end).
        result = if Rperf.respond_to?(:allocations?) && Rperf.allocations?
                   Rperf.label(job: name, queue: queue) { yield }
                 else
                   yield
                 end
        ok = true
        result
      ensure
        seconds = clock - t0
        labels = { job: name, queue: queue, job_status: ok ? "ok" : "error" }
        meta = nil
        if log.slow?(seconds)
          # What rperf report prints of the file ("Capture: ...") and
          # report --list shows.
          meta = { "kind" => "job", "name" => name, "queue" => queue.to_s,
                   "status" => ok ? "ok" : "error", "pid" => Process.pid.to_s }
        end
        Rperf.mark_stop(mark) if mark
        log.finish(token, labels, seconds, meta)
      end
    end
  end
end
