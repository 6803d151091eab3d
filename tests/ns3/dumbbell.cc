// aqmlab's dumbbell in ns-3 (3.44, the PyPI wheel `ns3`), for the cross-check of tests/ns3/.
//
// Loaded by tests/ns3/crosscheck.py through cppyy (the wheel's bindings): the wheel's shared
// libraries are loaded, this file is compiled by cling, and `aqmlab_ns3::Run` is called with a
// `Setup` filled in from the same numbers as the aqmlab scenario. Written here from ns-3's
// documented C++ API; every mapping choice is in tests/ns3/README.md.
//
// (With `Setup::chain_lm_rate_bps`, two queues in sequence in place of the one bottleneck: see
// the Setup.)
//
// N senders S_i -> R1 -> bottleneck -> R2 -> N receivers D_i, one host pair per flow, each with
// its own access links (both of a flow's access links have the flow's delay, as aqmlab's
// `access_delay` draw). The bottleneck's two devices each have a queue disc (the scheme under
// test, as aqmlab's `[aqm]` and `[reverse_aqm]`) above a device queue of one packet; the access
// links have no queue disc and a device queue of `access_buffer` packets (aqmlab's DropTail
// access queues). Every point-to-point device adds a 2-byte PPP header, so each link runs
// (packet_size + 2) / packet_size times faster than its nominal rate: a full data packet takes
// the same time on the wire as in aqmlab.
//
// Figures over [measure_start, duration], on R1's bottleneck device (the forward direction):
// utilisation (IP bytes that start transmission), the time-weighted mean of the queue disc's
// packets and of the queue disc's plus the device queue's (aqmlab's queue: every packet waiting,
// the one in transmission excluded), the mean sojourn in the queue disc (what CoDel and PIE
// see) and the mean wait from the queue disc's enqueue to the start of transmission (aqmlab's
// queuing delay), the queue disc's arrivals, drops and marks, each flow's goodput (bytes its
// PacketSink received), and the senders' fast recoveries, loss-state entries, ECN window cuts
// and retransmitted segments.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <utility>
#include <cstdint>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace aqmlab_ns3
{

using namespace ns3;

// One run's set-up. Times in nanoseconds, rates in bit/s, sizes in packets unless named bytes.
struct Setup
{
    // "ns3::TcpNewReno", "ns3::TcpCubic", "ns3::TcpDctcp", "ns3::TcpBbr".
    std::string cc = "ns3::TcpNewReno";
    // Per flow, its congestion control (its sender's and receiver's TcpL4Protocol SocketType);
    // empty: `cc` for every flow.
    std::vector<std::string> flow_cc;
    // TcpDctcp's UseEct0: false sends ECT(1), the L4S identifier.
    bool dctcp_ect0 = true;
    // "red", "ared", "ared-feng", "pie", "codel", "cobalt", "step" (RED as a step marker:
    // instantaneous queue, one threshold), "fq-pie", "fq-cobalt" or "fq-codel".
    std::string aqm = "red";
    bool ecn = false;
    bool sack = false;
    // "ns3::TcpClassicRecovery" (NewReno's window inflation) or "ns3::TcpPrrRecovery"
    std::string recovery = "ns3::TcpClassicRecovery";
    bool limited_transmit = true;
    double rate_bps = 10e6;
    int64_t bottleneck_delay_ns = 25000000;
    double access_rate_bps = 100e6;
    // Per flow: the one-way delay of each of its two access links, and its start time.
    std::vector<int64_t> access_delay_ns;
    std::vector<int64_t> start_ns;
    uint32_t packet_size = 1500; // IP bytes of a full data packet (aqmlab's packet_size)
    uint32_t buffer = 500;       // queue disc limit
    uint32_t device_queue = 1;   // bottleneck devices' own queue
    uint32_t access_buffer = 10000;
    uint32_t initial_cwnd = 10;
    int64_t min_rto_ns = 200000000;
    uint32_t del_ack_count = 1;
    int64_t duration_ns = 40000000000;
    int64_t measure_start_ns = 10000000000;
    uint32_t run = 1; // ns-3's run number (RngSeedManager::SetRun)
    // Two queues in sequence (RFC 7928 section 10.2's path) in place of the dumbbell's one:
    // routers L, M and R; the first `chain_a_flows` senders attach to L, the others to M, every
    // receiver to R. L -> M runs at `chain_lm_rate_bps` with `chain_lm_delay_ns`, M -> R is the
    // bottleneck above (`rate_bps`, `bottleneck_delay_ns`); both carry the queue disc under test.
    // 0: the dumbbell.
    double chain_lm_rate_bps = 0;
    int64_t chain_lm_delay_ns = 0;
    uint32_t chain_a_flows = 0;
    // RED (packet mode)
    double red_min_th = 20;
    double red_max_th = 60;
    double red_max_p = 0.1;
    double red_w_q = 0.002;
    bool red_gentle = true;
    bool red_wait = true;
    // Floyd's Adaptive RED (`ARED`: thresholds and weight set from the link, max_p adapted by
    // AIMD) and Feng's self-configuring RED (`FengAdaptive`); ARED's lower bound on max_p
    // (`Bottom`; 0: ns-3's own, min(0.01, 8 MeanPktSize Rtt / LinkBandwidth)).
    bool red_ared = false;
    bool red_feng = false;
    double red_bottom = 0;
    // PIE
    int64_t pie_target_ns = 15000000;
    int64_t pie_t_update_ns = 15000000;
    int64_t pie_max_burst_ns = 150000000;
    double pie_alpha = 0.125;
    double pie_beta = 1.25;
    double pie_mark_ecnth = 0.1;
    // CoDel
    int64_t codel_target_ns = 5000000;
    int64_t codel_interval_ns = 100000000;
    // step marking (DCTCP's K), packets
    double step_k = 20;
    // The flow-queue schemes: queues, DRR quantum (bytes of IP packet; ns-3's default is the
    // device's MTU, 1500), PIE's de-randomisation in FQ-PIE, COBALT's BLUE (its target and
    // interval are codel_target_ns and codel_interval_ns), and the CE threshold with L4S mode.
    uint32_t fq_flows = 1024;
    uint32_t fq_quantum = 1514;
    bool pie_derandomize = false;
    double cobalt_increment = 1.0 / 256;
    double cobalt_decrement = 1.0 / 4096;
    int64_t cobalt_blue_threshold_ns = 400000000;
    int64_t ce_threshold_ns = -1; // -1: none (Time::Max)
    bool use_l4s = false;
    // Diagnosis: print every segment sent and ACK received by this flow's sender, and its
    // congestion states and window, over [trace_from_ns, trace_to_ns] (-1: none).
    int32_t trace_flow = -1;
    int64_t trace_from_ns = 0;
    int64_t trace_to_ns = 0;
    // Diagnosis: write the bottleneck queue disc's arrivals ("a TIME_NS") and every change of its
    // packet count ("q TIME_NS PACKETS") to this file, from which RED's average can be followed
    // (crosscheck.py --queue-trace); empty: none.
    std::string queue_trace_path;
};

// For diagnosis only (crosscheck.py --ns3-window-cut): NewReno whose ssthresh at three duplicate
// ACKs (and at an ECN-Echo or a timeout) is half the window before recovery in whole segments,
// at most half the flight, as aqmlab's loss_ssthresh = "window"; TcpNewReno halves
// BytesInFlight, which with SACK is RFC 6675's pipe.
class TcpNewRenoWindowCut : public TcpNewReno
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("aqmlab_ns3::TcpNewRenoWindowCut")
                                .SetParent<TcpNewReno>()
                                .AddConstructor<TcpNewRenoWindowCut>();
        return tid;
    }

    TcpNewRenoWindowCut() = default;
    TcpNewRenoWindowCut(const TcpNewRenoWindowCut&) = default;

    std::string GetName() const override
    {
        return "TcpNewRenoWindowCut";
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t) override
    {
        uint32_t seg = tcb->m_segmentSize;
        uint32_t half = tcb->m_cWnd.Get() / seg / 2 * seg;
        uint32_t flight = tcb->m_highTxMark.Get() - tcb->m_lastAckedSeq;
        return std::max(2 * seg, std::min(half, flight / 2 / seg * seg));
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<TcpNewRenoWindowCut>(this);
    }
};

// For diagnosis only (crosscheck.py --ns3-count-reset): ns-3.44's TcpLinuxReno, and TcpDctcp
// built on it, keep their linear-increase count (m_cWndCnt: segments acknowledged towards the
// next one) through a window reduction, so the window grows again sooner after a cut; Linux's
// tcp_init_cwnd_reduction (CWR, Recovery) and tcp_enter_loss clear snd_cwnd_cnt, and so does
// aqmlab. CountReset<TcpLinuxReno> and CountReset<TcpDctcp> clear it wherever ns-3 asks for a
// new ssthresh (EnterCwr, EnterRecovery, a timeout). The count is private to TcpLinuxReno: it
// is reached through a pointer to member named in an explicit template instantiation, where the
// language checks no access.
struct LinuxRenoCount
{
    using type = uint32_t TcpLinuxReno::*;
    friend type RenoCount(LinuxRenoCount);
};

template <typename Tag, typename Tag::type Member>
struct ExposeMember
{
    friend typename Tag::type RenoCount(Tag)
    {
        return Member;
    }
};

template struct ExposeMember<LinuxRenoCount, &TcpLinuxReno::m_cWndCnt>;

inline void
ClearRenoCount(TcpLinuxReno& cc)
{
    cc.*RenoCount(LinuxRenoCount{}) = 0;
}

// Base (TcpLinuxReno or TcpDctcp) with the count cleared at a cut, registered as
// "aqmlab_ns3::<Base's name>CountReset".
template <typename Base>
class CountReset : public Base
{
  public:
    static TypeId GetTypeId()
    {
        static const std::string base = Base::GetTypeId().GetName(); // "ns3::TcpDctcp"
        static TypeId tid = TypeId("aqmlab_ns3::" + base.substr(base.find("::") + 2) + "CountReset")
                                .template SetParent<Base>()
                                .template AddConstructor<CountReset<Base>>();
        return tid;
    }

    CountReset() = default;
    CountReset(const CountReset&) = default;

    std::string GetName() const override
    {
        return Base::GetName() + "CountReset";
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        ClearRenoCount(*this);
        return Base::GetSsThresh(tcb, bytesInFlight);
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<CountReset<Base>>(this);
    }
};

// A window [from, to) of simulated time (ns): what the trace sinks below record in.
class TimeWindow
{
  public:
    TimeWindow(int64_t from, int64_t to)
        : m_from(from),
          m_to(to)
    {
    }

    bool On() const
    {
        int64_t t = Simulator::Now().GetNanoSeconds();
        return t >= m_from && t < m_to;
    }

    int64_t m_from;
    int64_t m_to;
};

// One flow's sender, event by event, on stdout (Setup::trace_flow).
class FlowTrace : public TimeWindow
{
  public:
    using TimeWindow::TimeWindow;

    void Tx(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
    {
        if (On() && p->GetSize() > 0)
        {
            std::cout << Simulator::Now().GetSeconds() << " tx " << h.GetSequenceNumber() << "\n";
        }
    }

    void Rx(Ptr<const Packet>, const TcpHeader& h, Ptr<const TcpSocketBase>)
    {
        if (On())
        {
            std::cout << Simulator::Now().GetSeconds() << " ack " << h.GetAckNumber()
                      << ((h.GetFlags() & TcpHeader::ECE) ? " ece" : "") << "\n";
        }
    }

    void State(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
    {
        if (On())
        {
            std::cout << Simulator::Now().GetSeconds() << " state "
                      << TcpSocketState::TcpCongStateName[now] << "\n";
        }
    }

    void Cwnd(uint32_t, uint32_t now)
    {
        if (On())
        {
            std::cout << Simulator::Now().GetSeconds() << " cwnd " << now << "\n";
        }
    }

    void InFlight(uint32_t, uint32_t now)
    {
        if (On())
        {
            std::cout << Simulator::Now().GetSeconds() << " inflight " << now << "\n";
        }
    }

    void Rto(Time, Time now)
    {
        if (On())
        {
            std::cout << Simulator::Now().GetSeconds() << " rto " << now.GetSeconds() << "\n";
        }
    }
};

struct Result
{
    double utilisation = 0;
    double queue_mean_pkts = 0; // queue disc + device queue
    double qdisc_mean_pkts = 0;
    double sojourn_mean_s = 0; // in the queue disc
    double wait_mean_s = 0;    // queue disc enqueue to start of transmission
    uint64_t arrivals = 0;
    uint64_t drops = 0;
    uint64_t marks = 0;
    uint64_t departures = 0;
    // drops and marks by ns-3's reason string (e.g. "Unforced drop", "Forced drop")
    std::map<std::string, uint64_t> reasons;
    std::vector<double> goodput_bps;
    uint64_t fast_recoveries = 0;
    uint64_t loss_entries = 0;
    uint64_t ecn_cuts = 0;
    uint64_t retransmits = 0;
    // The flow-queue schemes: flow queues the forward queue disc created (distinct hashes)
    uint64_t queues = 0;
    uint64_t events = 0;
    double wall_s = 0;
    // The chain's L -> M queue (Setup::chain_lm_rate_bps), its figures as the bottleneck's.
    double lm_utilisation = 0;
    double lm_queue_mean_pkts = 0;
    double lm_wait_mean_s = 0;
    uint64_t lm_arrivals = 0;
    uint64_t lm_drops = 0;
    uint64_t lm_marks = 0;
};

// The trace sinks: every figure is taken in C++, nothing calls back into Python.
class Monitor : public TimeWindow
{
  public:
    using TimeWindow::TimeWindow;

    // Time-weighted integrals of the queue disc's and the device queue's packets.
    void Advance()
    {
        int64_t now = std::min(Simulator::Now().GetNanoSeconds(), m_to);
        int64_t from = std::max(m_last, m_from);
        if (now > from)
        {
            m_qdiscArea += double(m_qdisc) * double(now - from);
            m_deviceArea += double(m_device) * double(now - from);
        }
        m_last = std::max(m_last, now);
    }

    void QdiscPackets(uint32_t, uint32_t n)
    {
        Advance();
        m_qdisc = n;
    }

    void DevicePackets(uint32_t, uint32_t n)
    {
        Advance();
        m_device = n;
    }

    void Sojourn(Time t)
    {
        if (On())
        {
            m_sojournSum += t.GetSeconds();
            ++m_sojournCount;
        }
    }

    void Enqueue(Ptr<const QueueDiscItem> item)
    {
        m_enqueued[item->GetPacket()->GetUid()] = Simulator::Now().GetNanoSeconds();
    }

    void DropAfterDequeue(Ptr<const QueueDiscItem> item, const char*)
    {
        m_enqueued.erase(item->GetPacket()->GetUid());
    }

    void TxBegin(Ptr<const Packet> p)
    {
        auto it = m_enqueued.find(p->GetUid());
        int64_t now = Simulator::Now().GetNanoSeconds();
        if (it != m_enqueued.end())
        {
            if (On())
            {
                m_waitSum += double(now - it->second) * 1e-9;
                ++m_waitCount;
            }
            m_enqueued.erase(it);
        }
        if (On())
        {
            m_txBytes += p->GetSize() - 2; // without the PPP header
            ++m_departures;
        }
    }

    void CongState(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
    {
        if (!On())
        {
            return;
        }
        if (now == TcpSocketState::CA_RECOVERY)
        {
            ++m_fastRecoveries;
        }
        else if (now == TcpSocketState::CA_LOSS)
        {
            ++m_lossEntries;
        }
        else if (now == TcpSocketState::CA_CWR)
        {
            ++m_ecnCuts;
        }
    }

    void Retransmission(Ptr<const Packet>,
                        const TcpHeader&,
                        const Address&,
                        const Address&,
                        Ptr<const TcpSocketBase>)
    {
        if (On())
        {
            ++m_retransmits;
        }
    }

    int64_t m_last = 0;
    uint32_t m_qdisc = 0;
    uint32_t m_device = 0;
    double m_qdiscArea = 0;
    double m_deviceArea = 0;
    double m_sojournSum = 0;
    uint64_t m_sojournCount = 0;
    double m_waitSum = 0;
    uint64_t m_waitCount = 0;
    uint64_t m_txBytes = 0;
    uint64_t m_departures = 0;
    uint64_t m_fastRecoveries = 0;
    uint64_t m_lossEntries = 0;
    uint64_t m_ecnCuts = 0;
    uint64_t m_retransmits = 0;
    std::unordered_map<uint64_t, int64_t> m_enqueued;
};

// A rate that sends packet_size + 2 bytes (PPP) in the time `bps` sends packet_size bytes.
inline DataRate
WireRate(double bps, uint32_t packetSize)
{
    return DataRate(uint64_t(bps * double(packetSize + 2) / double(packetSize) + 0.5));
}

// A root queue disc of `type` that holds `limit`, with `attributes` (a tuple: name, value,
// name, value, ...), then the disc's own (`more`).
template <typename Attributes, typename... More>
void
SetRoot(TrafficControlHelper& tch,
        const std::string& type,
        const std::string& limit,
        const Attributes& attributes,
        More&&... more)
{
    std::apply(
        [&](const auto&... a) {
            tch.SetRootQueueDisc(type,
                                 "MaxSize",
                                 QueueSizeValue(QueueSize(limit)),
                                 a...,
                                 std::forward<More>(more)...);
        },
        attributes);
}

// PIE's attributes as the pairs set them, for PieQueueDisc or FqPieQueueDisc.
auto
PieAttributes(const Setup& c)
{
    return std::make_tuple("MeanPktSize",
                           UintegerValue(c.packet_size),
                           "A",
                           DoubleValue(c.pie_alpha),
                           "B",
                           DoubleValue(c.pie_beta),
                           "Tupdate",
                           TimeValue(NanoSeconds(c.pie_t_update_ns)),
                           "QueueDelayReference",
                           TimeValue(NanoSeconds(c.pie_target_ns)),
                           "MaxBurstAllowance",
                           TimeValue(NanoSeconds(c.pie_max_burst_ns)),
                           "UseDequeueRateEstimator",
                           BooleanValue(false),
                           "UseCapDropAdjustment",
                           BooleanValue(true),
                           "UseDerandomization",
                           BooleanValue(c.pie_derandomize),
                           "UseEcn",
                           BooleanValue(c.ecn),
                           "MarkEcnThreshold",
                           DoubleValue(c.pie_mark_ecnth));
}

// COBALT's attributes as the pairs set them, for CobaltQueueDisc or FqCobaltQueueDisc (which
// hands them to a CobaltQueueDisc per flow queue; its Target and Interval are strings).
auto
CobaltAttributes(const Setup& c)
{
    return std::make_tuple("Target",
                           StringValue(std::to_string(c.codel_target_ns) + "ns"),
                           "Interval",
                           StringValue(std::to_string(c.codel_interval_ns) + "ns"),
                           "Increment",
                           DoubleValue(c.cobalt_increment),
                           "Decrement",
                           DoubleValue(c.cobalt_decrement),
                           "BlueThreshold",
                           TimeValue(NanoSeconds(c.cobalt_blue_threshold_ns)),
                           "UseEcn",
                           BooleanValue(c.ecn));
}

inline TrafficControlHelper
QueueDiscFor(const Setup& c)
{
    TrafficControlHelper tch;
    std::string limit = std::to_string(c.buffer) + "p";
    if (c.aqm == "red" || c.aqm == "ared" || c.aqm == "ared-feng" || c.aqm == "step")
    {
        bool step = c.aqm == "step";
        tch.SetRootQueueDisc("ns3::RedQueueDisc",
                             "MaxSize",
                             QueueSizeValue(QueueSize(limit)),
                             "MeanPktSize",
                             UintegerValue(c.packet_size),
                             "MinTh",
                             DoubleValue(step ? c.step_k : c.red_min_th),
                             "MaxTh",
                             DoubleValue(step ? c.step_k : c.red_max_th),
                             "QW",
                             DoubleValue(step ? 1.0 : c.red_w_q),
                             "LInterm",
                             DoubleValue(1.0 / c.red_max_p),
                             "Gentle",
                             BooleanValue(step ? false : c.red_gentle),
                             "Wait",
                             BooleanValue(c.red_wait),
                             "LinkBandwidth",
                             DataRateValue(DataRate(uint64_t(c.rate_bps))),
                             "LinkDelay",
                             TimeValue(NanoSeconds(c.bottleneck_delay_ns)),
                             "UseEcn",
                             BooleanValue(c.ecn),
                             "UseHardDrop",
                             BooleanValue(false),
                             "ARED",
                             BooleanValue(c.red_ared),
                             "FengAdaptive",
                             BooleanValue(c.red_feng),
                             "Bottom",
                             DoubleValue(c.red_bottom));
    }
    else if (c.aqm == "pie")
    {
        SetRoot(tch, "ns3::PieQueueDisc", limit, PieAttributes(c));
    }
    else if (c.aqm == "codel")
    {
        tch.SetRootQueueDisc("ns3::CoDelQueueDisc",
                             "MaxSize",
                             QueueSizeValue(QueueSize(limit)),
                             "MinBytes",
                             UintegerValue(c.packet_size),
                             "Target",
                             TimeValue(NanoSeconds(c.codel_target_ns)),
                             "Interval",
                             TimeValue(NanoSeconds(c.codel_interval_ns)),
                             "UseEcn",
                             BooleanValue(c.ecn));
    }
    else if (c.aqm == "cobalt")
    {
        SetRoot(tch, "ns3::CobaltQueueDisc", limit, CobaltAttributes(c));
    }
    else if (c.aqm == "fq-pie")
    {
        // FqPieQueueDisc hands its PIE attributes to a PieQueueDisc per flow queue (all but
        // MarkEcnThreshold, which stays the child's default, 0.1).
        SetRoot(tch,
                "ns3::FqPieQueueDisc",
                limit,
                PieAttributes(c),
                "Flows",
                UintegerValue(c.fq_flows));
    }
    else if (c.aqm == "fq-cobalt")
    {
        SetRoot(tch,
                "ns3::FqCobaltQueueDisc",
                limit,
                CobaltAttributes(c),
                "Flows",
                UintegerValue(c.fq_flows));
    }
    else if (c.aqm == "fq-codel")
    {
        // Each flow queue's CoDelQueueDisc keeps its default MinBytes, 1500.
        tch.SetRootQueueDisc("ns3::FqCoDelQueueDisc",
                             "MaxSize",
                             QueueSizeValue(QueueSize(limit)),
                             "Flows",
                             UintegerValue(c.fq_flows),
                             "Target",
                             StringValue(std::to_string(c.codel_target_ns) + "ns"),
                             "Interval",
                             StringValue(std::to_string(c.codel_interval_ns) + "ns"),
                             "CeThreshold",
                             TimeValue(c.ce_threshold_ns < 0 ? Time::Max()
                                                             : NanoSeconds(c.ce_threshold_ns)),
                             "UseL4s",
                             BooleanValue(c.use_l4s),
                             "UseEcn",
                             BooleanValue(c.ecn));
    }
    else
    {
        NS_FATAL_ERROR("unknown aqm " << c.aqm);
    }
    return tch;
}

inline TypeId
CongestionControl(const std::string& name)
{
    TcpNewRenoWindowCut::GetTypeId(); // registered on first use
    CountReset<TcpLinuxReno>::GetTypeId();
    CountReset<TcpDctcp>::GetTypeId();
    TypeId cc;
    if (!TypeId::LookupByNameFailSafe(name, &cc))
    {
        NS_FATAL_ERROR("unknown congestion control " << name);
    }
    return cc;
}

inline void
SetTcpDefaults(const Setup& c)
{
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(CongestionControl(c.cc)));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TypeId::LookupByName(c.recovery)));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(c.limited_transmit));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(c.packet_size - 40));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(c.initial_cwnd));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(c.del_ack_count));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 22));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 22));
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(1000));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(c.sack));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(NanoSeconds(c.min_rto_ns)));
    Config::SetDefault("ns3::TcpSocketBase::UseEcn",
                       EnumValue(c.ecn ? TcpSocketState::On : TcpSocketState::Off));
    Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(false));
    Config::SetDefault("ns3::TcpCubic::HyStart", BooleanValue(false));
    Config::SetDefault("ns3::TcpDctcp::UseEct0", BooleanValue(c.dctcp_ect0));
}

// The flow queues' own random streams (PIE's drop draw, COBALT's BLUE): each child queue disc
// is created at its flow's first packet and draws an automatic stream that depends on what ran
// before in this process, so each is given a fixed one as soon as it exists (before any draw:
// PIE draws only after its burst allowance, COBALT only once BLUE's probability is above 0).
class ChildStreams
{
  public:
    ChildStreams(Ptr<QueueDisc> root, int64_t first)
        : m_root(root),
          m_next(first)
    {
    }

    void Enqueue(Ptr<const QueueDiscItem>)
    {
        for (; m_done < m_root->GetNQueueDiscClasses(); ++m_done)
        {
            Ptr<QueueDisc> child = m_root->GetQueueDiscClass(m_done)->GetQueueDisc();
            if (auto pie = DynamicCast<PieQueueDisc>(child))
            {
                m_next += pie->AssignStreams(m_next);
            }
            else if (auto cobalt = DynamicCast<CobaltQueueDisc>(child))
            {
                m_next += cobalt->AssignStreams(m_next);
            }
        }
    }

    Ptr<QueueDisc> m_root;
    int64_t m_next;
    std::size_t m_done = 0;
};

// The figures a Monitor takes of a queue disc and its link's forward device (`core.Get(0)`):
// the waits from enqueue to the start of transmission, the device queue's packets, the bytes
// sent. The queue disc's own packet count is connected by the caller.
inline void
Watch(Monitor& mon, Ptr<QueueDisc> q, const NetDeviceContainer& core)
{
    q->TraceConnectWithoutContext("Enqueue", MakeCallback(&Monitor::Enqueue, &mon));
    q->TraceConnectWithoutContext("DropAfterDequeue",
                                  MakeCallback(&Monitor::DropAfterDequeue, &mon));
    Ptr<PointToPointNetDevice> dev = DynamicCast<PointToPointNetDevice>(core.Get(0));
    dev->GetQueue()->TraceConnectWithoutContext("PacketsInQueue",
                                                 MakeCallback(&Monitor::DevicePackets, &mon));
    dev->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&Monitor::TxBegin, &mon));
}

inline Result
Run(const Setup& c)
{
    auto wall0 = std::chrono::steady_clock::now();
    Config::Reset();
    Ipv4AddressGenerator::Reset();
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(c.run);
    SetTcpDefaults(c);

    const uint32_t n = c.start_ns.size();
    const bool chain = c.chain_lm_rate_bps > 0;
    NodeContainer routers;
    routers.Create(chain ? 3 : 2);
    // The bottleneck's ends, and the router each flow's sender attaches to.
    Ptr<Node> head = routers.Get(chain ? 1 : 0);
    Ptr<Node> tail = routers.Get(chain ? 2 : 1);
    auto entry = [&](uint32_t i) { return chain && i < c.chain_a_flows ? routers.Get(0) : head; };
    NodeContainer senders;
    senders.Create(n);
    NodeContainer receivers;
    receivers.Create(n);
    InternetStackHelper stack;
    stack.InstallAll();

    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate",
                                  DataRateValue(WireRate(c.rate_bps, c.packet_size)));
    bottleneck.SetChannelAttribute("Delay", TimeValue(NanoSeconds(c.bottleneck_delay_ns)));
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>",
                        "MaxSize",
                        QueueSizeValue(QueueSize(std::to_string(c.device_queue) + "p")));
    NetDeviceContainer core = bottleneck.Install(head, tail);
    TrafficControlHelper tch = QueueDiscFor(c);
    QueueDiscContainer qdiscs = tch.Install(core);

    Ipv4AddressHelper address;
    address.SetBase("10.0.0.0", "255.255.255.252");
    address.Assign(core);

    // The chain's L -> M link: the same queue disc, set for its own rate and delay (RED's idle
    // rule and its automatic settings read them).
    NetDeviceContainer coreLm;
    QueueDiscContainer qdiscsLm;
    if (chain)
    {
        Setup lm = c;
        lm.rate_bps = c.chain_lm_rate_bps;
        lm.bottleneck_delay_ns = c.chain_lm_delay_ns;
        PointToPointHelper lmLink;
        lmLink.SetDeviceAttribute("DataRate", DataRateValue(WireRate(lm.rate_bps, c.packet_size)));
        lmLink.SetChannelAttribute("Delay", TimeValue(NanoSeconds(lm.bottleneck_delay_ns)));
        lmLink.SetQueue("ns3::DropTailQueue<Packet>",
                        "MaxSize",
                        QueueSizeValue(QueueSize(std::to_string(c.device_queue) + "p")));
        coreLm = lmLink.Install(routers.Get(0), routers.Get(1));
        TrafficControlHelper tchLm = QueueDiscFor(lm);
        qdiscsLm = tchLm.Install(coreLm);
        address.NewNetwork();
        address.Assign(coreLm);
    }

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate",
                              DataRateValue(WireRate(c.access_rate_bps, c.packet_size)));
    access.SetQueue("ns3::DropTailQueue<Packet>",
                    "MaxSize",
                    QueueSizeValue(QueueSize(std::to_string(c.access_buffer) + "p")));
    TrafficControlHelper none;
    std::vector<Ipv4Address> sinkAddress;
    for (uint32_t i = 0; i < n; ++i)
    {
        access.SetChannelAttribute("Delay", TimeValue(NanoSeconds(c.access_delay_ns[i])));
        NetDeviceContainer left = access.Install(senders.Get(i), entry(i));
        NetDeviceContainer right = access.Install(tail, receivers.Get(i));
        address.NewNetwork();
        address.Assign(left);
        address.NewNetwork();
        Ipv4InterfaceContainer r = address.Assign(right);
        sinkAddress.push_back(r.GetAddress(1));
        // Ipv4AddressHelper installs ns-3's default queue disc (FqCoDel): the access links
        // keep only their device queue, as aqmlab's DropTail access queues.
        none.Uninstall(left);
        none.Uninstall(right);
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // RED's, PIE's and COBALT's random streams, fixed whatever ran before in this process.
    int64_t stream = 0;
    std::vector<Ptr<QueueDisc>> all;
    for (const QueueDiscContainer* qc : {&qdiscs, &qdiscsLm})
    {
        for (uint32_t k = 0; k < qc->GetN(); ++k)
        {
            all.push_back(qc->Get(k));
        }
    }
    for (Ptr<QueueDisc> qd : all)
    {
        if (auto red = DynamicCast<RedQueueDisc>(qd))
        {
            stream += red->AssignStreams(stream);
        }
        else if (auto pie = DynamicCast<PieQueueDisc>(qd))
        {
            stream += pie->AssignStreams(stream);
        }
        else if (auto cobalt = DynamicCast<CobaltQueueDisc>(qd))
        {
            stream += cobalt->AssignStreams(stream);
        }
    }

    Monitor mon(c.measure_start_ns, c.duration_ns);
    Ptr<QueueDisc> q = qdiscs.Get(0);
    // The flow-queue schemes: the quantum (read at initialisation), and the children's streams
    // (the forward queue's from 1000, the reverse queue's from 100000).
    std::vector<std::unique_ptr<ChildStreams>> childStreams;
    for (uint32_t k = 0; k < qdiscs.GetN(); ++k)
    {
        Ptr<QueueDisc> root = qdiscs.Get(k);
        if (auto fq = DynamicCast<FqPieQueueDisc>(root))
        {
            fq->SetQuantum(c.fq_quantum);
        }
        else if (auto fq = DynamicCast<FqCobaltQueueDisc>(root))
        {
            fq->SetQuantum(c.fq_quantum);
        }
        else if (auto fq = DynamicCast<FqCoDelQueueDisc>(root))
        {
            fq->SetQuantum(c.fq_quantum);
        }
        else
        {
            continue;
        }
        childStreams.push_back(std::make_unique<ChildStreams>(root, k == 0 ? 1000 : 100000));
        root->TraceConnectWithoutContext(
            "Enqueue",
            MakeCallback(&ChildStreams::Enqueue, childStreams.back().get()));
    }
    q->TraceConnectWithoutContext("PacketsInQueue", MakeCallback(&Monitor::QdiscPackets, &mon));
    std::ofstream queueTrace;
    if (!c.queue_trace_path.empty())
    {
        queueTrace.open(c.queue_trace_path);
        std::ofstream* out = &queueTrace;
        q->TraceConnectWithoutContext(
            "PacketsInQueue",
            MakeCallback(
                +[](std::ofstream* o, uint32_t, uint32_t n) {
                    *o << "q " << Simulator::Now().GetNanoSeconds() << ' ' << n << '\n';
                })
                .Bind(out));
        q->TraceConnectWithoutContext(
            "Enqueue",
            MakeCallback(+[](std::ofstream* o, Ptr<const QueueDiscItem>) {
                *o << "a " << Simulator::Now().GetNanoSeconds() << '\n';
            }).Bind(out));
    }
    q->TraceConnectWithoutContext("SojournTime", MakeCallback(&Monitor::Sojourn, &mon));
    Watch(mon, q, core);
    Monitor monLm(c.measure_start_ns, c.duration_ns);
    Ptr<QueueDisc> qLm = chain ? qdiscsLm.Get(0) : nullptr;
    if (chain)
    {
        qLm->TraceConnectWithoutContext("PacketsInQueue",
                                        MakeCallback(&Monitor::QdiscPackets, &monLm));
        Watch(monLm, qLm, coreLm);
    }

    for (uint32_t i = 0; i < n && !c.flow_cc.empty(); ++i)
    {
        TypeIdValue cc(CongestionControl(c.flow_cc[i]));
        senders.Get(i)->GetObject<TcpL4Protocol>()->SetAttribute("SocketType", cc);
        receivers.Get(i)->GetObject<TcpL4Protocol>()->SetAttribute("SocketType", cc);
    }

    FlowTrace ft(c.trace_from_ns, c.trace_to_ns);
    const uint16_t port = 5000;
    std::vector<Ptr<PacketSink>> sinks;
    for (uint32_t i = 0; i < n; ++i)
    {
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sinkApp = sinkHelper.Install(receivers.Get(i));
        sinkApp.Start(Seconds(0));
        sinks.push_back(DynamicCast<PacketSink>(sinkApp.Get(0)));

        BulkSendHelper source("ns3::TcpSocketFactory", InetSocketAddress(sinkAddress[i], port));
        source.SetAttribute("MaxBytes", UintegerValue(0));
        source.SetAttribute("SendSize", UintegerValue(c.packet_size - 40));
        ApplicationContainer app = source.Install(senders.Get(i));
        app.Start(NanoSeconds(c.start_ns[i]));
        Ptr<BulkSendApplication> bulk = DynamicCast<BulkSendApplication>(app.Get(0));
        bulk->TraceConnectWithoutContext("TcpRetransmission",
                                         MakeCallback(&Monitor::Retransmission, &mon));
        // The socket exists once the application has started.
        bool traced = int32_t(i) == c.trace_flow;
        Simulator::Schedule(NanoSeconds(c.start_ns[i] + 1), [bulk, &mon, &ft, traced]() {
            Ptr<Socket> s = bulk->GetSocket();
            s->TraceConnectWithoutContext("CongState", MakeCallback(&Monitor::CongState, &mon));
            if (traced)
            {
                s->TraceConnectWithoutContext("Tx", MakeCallback(&FlowTrace::Tx, &ft));
                s->TraceConnectWithoutContext("Rx", MakeCallback(&FlowTrace::Rx, &ft));
                s->TraceConnectWithoutContext("CongState", MakeCallback(&FlowTrace::State, &ft));
                s->TraceConnectWithoutContext("CongestionWindow",
                                              MakeCallback(&FlowTrace::Cwnd, &ft));
                s->TraceConnectWithoutContext("RTO", MakeCallback(&FlowTrace::Rto, &ft));
                s->TraceConnectWithoutContext("BytesInFlight",
                                              MakeCallback(&FlowTrace::InFlight, &ft));
            }
        });
    }

    std::vector<uint64_t> rx0(n, 0);
    QueueDisc::Stats s0;
    QueueDisc::Stats sLm0;
    Simulator::Schedule(NanoSeconds(c.measure_start_ns), [&]() {
        mon.Advance();
        s0 = q->GetStats();
        if (chain)
        {
            monLm.Advance();
            sLm0 = qLm->GetStats();
        }
        for (uint32_t i = 0; i < n; ++i)
        {
            rx0[i] = sinks[i]->GetTotalRx();
        }
    });

    Result r;
    Simulator::Stop(NanoSeconds(c.duration_ns));
    Simulator::Run();
    mon.Advance();

    const double window = double(c.duration_ns - c.measure_start_ns);
    QueueDisc::Stats s1 = q->GetStats();
    r.arrivals = s1.nTotalReceivedPackets - s0.nTotalReceivedPackets;
    r.drops = s1.nTotalDroppedPackets - s0.nTotalDroppedPackets;
    r.marks = s1.nTotalMarkedPackets - s0.nTotalMarkedPackets;
    r.departures = mon.m_departures;
    for (const auto* m : {&s1.nDroppedPacketsBeforeEnqueue, &s1.nDroppedPacketsAfterDequeue})
    {
        for (const auto& [reason, count] : *m)
        {
            r.reasons[reason] += count;
        }
    }
    for (const auto& [reason, count] : s1.nMarkedPackets)
    {
        r.reasons[reason] += count;
    }
    for (const auto* m : {&s0.nDroppedPacketsBeforeEnqueue, &s0.nDroppedPacketsAfterDequeue})
    {
        for (const auto& [reason, count] : *m)
        {
            r.reasons[reason] -= count;
        }
    }
    for (const auto& [reason, count] : s0.nMarkedPackets)
    {
        r.reasons[reason] -= count;
    }
    r.utilisation = double(mon.m_txBytes) * 8.0 / (c.rate_bps * window * 1e-9);
    r.qdisc_mean_pkts = mon.m_qdiscArea / window;
    r.queue_mean_pkts = (mon.m_qdiscArea + mon.m_deviceArea) / window;
    r.sojourn_mean_s = mon.m_sojournCount ? mon.m_sojournSum / double(mon.m_sojournCount) : 0.0;
    r.wait_mean_s = mon.m_waitCount ? mon.m_waitSum / double(mon.m_waitCount) : 0.0;
    for (uint32_t i = 0; i < n; ++i)
    {
        r.goodput_bps.push_back(double(sinks[i]->GetTotalRx() - rx0[i]) * 8.0 /
                                (window * 1e-9));
    }
    r.fast_recoveries = mon.m_fastRecoveries;
    r.loss_entries = mon.m_lossEntries;
    r.ecn_cuts = mon.m_ecnCuts;
    r.retransmits = mon.m_retransmits;
    r.queues = childStreams.empty() ? 0 : q->GetNQueueDiscClasses();
    if (chain)
    {
        monLm.Advance();
        QueueDisc::Stats sLm1 = qLm->GetStats();
        r.lm_arrivals = sLm1.nTotalReceivedPackets - sLm0.nTotalReceivedPackets;
        r.lm_drops = sLm1.nTotalDroppedPackets - sLm0.nTotalDroppedPackets;
        r.lm_marks = sLm1.nTotalMarkedPackets - sLm0.nTotalMarkedPackets;
        r.lm_utilisation =
            double(monLm.m_txBytes) * 8.0 / (c.chain_lm_rate_bps * window * 1e-9);
        r.lm_queue_mean_pkts = (monLm.m_qdiscArea + monLm.m_deviceArea) / window;
        r.lm_wait_mean_s = monLm.m_waitCount ? monLm.m_waitSum / double(monLm.m_waitCount) : 0.0;
    }
    r.events = Simulator::GetEventCount();
    Simulator::Destroy();
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    return r;
}

} // namespace aqmlab_ns3
